// What other resources may use of sessions. Their files import sessions only through here.
export { startLoginSession } from "./sessions.service";
