// A platform's badge: its short mark on its brand colour (darkened where needed so white text keeps
// a 4.5:1 contrast), named for screen readers, so a post's platforms read at a glance in the calendar.
import { platformName } from "../errors.js"
import { h } from "../ui.js"

const marks = {
  x: "X",
  instagram: "IG",
  facebook: "f",
  linkedin: "in",
  youtube: "YT",
  tiktok: "TT",
  threads: "@",
  pinterest: "P",
  bluesky: "BS",
  telegram: "TG",
  discord: "DC"
}

export const platformBadge = (platform) =>
  h(
    "span",
    { class: `pf pf-${platform}`, role: "img", "aria-label": platformName(platform), title: platformName(platform) },
    marks[platform] ?? platform.slice(0, 2).toUpperCase()
  )

/** The badges of the platforms a post goes to, in a group named by them (none: nothing). */
export const platformBadges = (platforms) =>
  platforms.length === 0
    ? null
    : h(
      "span",
      { class: "platforms", "data-platforms": platforms.join(" ") },
      platforms.map(platformBadge)
    )
