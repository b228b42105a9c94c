// What other resources may use of auth. Their files import auth only through here.
export { codeMail, consumeEmailCode, createEmailCode, invalidCode } from "./email-codes";
