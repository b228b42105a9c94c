import { useRouteLoaderData } from "@remix-run/react";

export type PublicEnv = { appUrl: string; apiUrl: string; redirectUrl: string; redirectDomain: string };
export type Viewer = { id: string; email: string; name: string | null; avatarUrl: string | null; isAdmin: boolean; plan: "free" | "pro" };
export type RootData = { env: PublicEnv; viewer: Viewer | null };

export function useRootData(): RootData {
  return useRouteLoaderData("root") as RootData;
}
export const useEnv = () => useRootData().env;
