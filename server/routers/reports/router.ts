import { router } from "../../trpc/init";

export const reportRouter = router({});
