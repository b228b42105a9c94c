import { mdiEmailOutline, mdiLinkedin, mdiWeb } from "@mdi/js";
import { siBluesky, siFacebook, siGithub, siInstagram, siMastodon, siThreads, siTiktok, siTwitch, siX, siYoutube } from "simple-icons";

/**
 * The social profiles' icons, from maintained icon packages rather than our own drawings: brand
 * marks from simple-icons, and from Material Design Icons what simple-icons does not carry (LinkedIn,
 * whose owner asked simple-icons to drop it, and the generic mail and globe). Both packages give one
 * path on a 24×24 grid, filled with the text colour. Named imports only, so the dashboard's bundle
 * keeps these few paths and not the whole sets.
 */
export const SOCIAL_ICON_PATHS: Record<string, string> = {
  instagram: siInstagram.path,
  tiktok: siTiktok.path,
  x: siX.path,
  youtube: siYoutube.path,
  linkedin: mdiLinkedin,
  github: siGithub.path,
  facebook: siFacebook.path,
  threads: siThreads.path,
  mastodon: siMastodon.path,
  bluesky: siBluesky.path,
  twitch: siTwitch.path,
  email: mdiEmailOutline,
  website: mdiWeb,
};

/** Hidden from assistive technology: the link around it carries the platform's name. */
export function SocialIcon({ platform }: { platform: string }) {
  return (
    <svg viewBox="0 0 24 24" fill="currentColor" aria-hidden="true" focusable="false" data-icon={platform}>
      <path d={SOCIAL_ICON_PATHS[platform] ?? SOCIAL_ICON_PATHS.website} />
    </svg>
  );
}
