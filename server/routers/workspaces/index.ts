// What other resources may use of workspaces. Their files import workspaces only through here.
export { lockWorkspace, lockWorkspaceOrNotFound, type WorkspaceLock } from "./workspace-lock";
