// Where the sign-in page sends the browser afterwards: a path of this site, never another origin (no
// open redirect). Browsers read "\" as "/" and drop tabs and newlines inside URLs, so "/\evil.example"
// and "/<TAB>/evil.example" name another host; such input is refused before parsing, and what parses
// must keep this origin and a path that does not start with "//" (which a browser reads as a host).

/** Where to go when `next` is missing or refused. */
export const home = "/posts"

const unsafe = /[\\\u0000-\u001f\u007f]/

/** `next` as a path of `origin` (path, query and fragment), or `home`. */
export const safeNext = (next, origin) => {
  if (typeof next !== "string" || !next.startsWith("/") || next.startsWith("//") || unsafe.test(next)) return home
  let url
  try {
    url = new URL(next, origin)
  } catch {
    return home
  }
  if (url.origin !== origin || url.pathname.startsWith("//")) return home
  return url.pathname + url.search + url.hash
}
