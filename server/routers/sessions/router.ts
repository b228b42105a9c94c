import { router } from "../../trpc/init";

export const sessionRouter = router({});
