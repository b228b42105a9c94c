-- API token look-ups are cached in each instance (server/core/auth.ts). Every change that can end a
-- token's access (revoked or deleted, its user's plan, admin flag or removal, a membership's role or
-- removal, a workspace deleted: its memberships cascade) tells every instance to drop them, whoever
-- made it (a procedure, the command line, psql). Procedures also wait for every instance to confirm.
CREATE OR REPLACE FUNCTION notify_credentials_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('link_changed', '!credentials');
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER api_tokens_credentials_changed AFTER UPDATE OF revoked_at, user_id, workspace_id, token_hash OR DELETE ON api_tokens FOR EACH STATEMENT EXECUTE FUNCTION notify_credentials_changed();
--> statement-breakpoint
CREATE TRIGGER users_credentials_changed AFTER UPDATE OF plan, is_admin OR DELETE ON users FOR EACH STATEMENT EXECUTE FUNCTION notify_credentials_changed();
--> statement-breakpoint
CREATE TRIGGER memberships_credentials_changed AFTER UPDATE OR DELETE ON memberships FOR EACH STATEMENT EXECUTE FUNCTION notify_credentials_changed();
