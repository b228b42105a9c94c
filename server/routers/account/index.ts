// What other resources may use of account. Their files import account only through here.
export { accountOutput, codeSchema, emailSchema, type AccountDto } from "./account.schema";
export { dropCaches, getAccount, purgeWorkspace } from "./account.service";
