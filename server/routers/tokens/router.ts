import { router } from "../../trpc/init";

export const tokenRouter = router({});
