import type { LoaderFunctionArgs } from "@remix-run/node";
import { swaggerFile } from "../lib/static.server";

export const loader = ({ params }: LoaderFunctionArgs) => swaggerFile(params.file ?? "");
