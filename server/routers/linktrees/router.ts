import { router } from "../../trpc/init";

export const linktreeRouter = router({});
