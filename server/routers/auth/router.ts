import { router } from "../../trpc/init";

export const authRouter = router({});
