/**
 * The platform API versions that are configuration rather than code: LinkedIn's `LinkedIn-Version`
 * header (`HERALD_LINKEDIN_VERSION`, YYYYMM) and Meta's Graph API version (`HERALD_GRAPH_VERSION`,
 * vNN.N, for Facebook and Instagram). Each has a published end of life; the server warns at start when
 * a configured version is within `warnWithinDays` of it, and a platform's "version no longer served"
 * answer names the setting to raise.
 *
 * Sunsets:
 * - LinkedIn supports each monthly version for at least one year and publishes each sunset date in
 *   its migrations table (learn.microsoft.com/linkedin/marketing/integrations/migrations); the dates
 *   are not all on the 15th (202511 on 2026-11-16, 202603 on 2027-03-16). The published ones are in
 *   `linkedinSunsets`; a version not in it is taken to sunset a year after its month, on the 15th.
 * - Meta publishes each Graph version's "available until" date in its changelog
 *   (developers.facebook.com/docs/graph-api/changelog/versions); the known ones are in `graphSunsets`.
 *   A version not in the table (v26.0: "TBD") has no known sunset and no warning; add it when Meta
 *   publishes the date.
 *
 * The defaults (checked 2026-11-28): Graph v26.0, released 2026-07-29, the newest in Meta's changelog;
 * LinkedIn 202607, a version LinkedIn lists as current in 2026, supported into mid 2027.
 */
import * as DateTime from "effect/DateTime"

export const linkedinSetting = "HERALD_LINKEDIN_VERSION"
export const graphSetting = "HERALD_GRAPH_VERSION"

export const defaultLinkedInVersion = "202607"
export const defaultGraphVersion = "v26.0"

export const warnWithinDays = 30

/** Meta's published "available until" dates (developers.facebook.com/docs/graph-api/changelog). */
export const graphSunsets: Readonly<Record<string, string>> = {
  "v20.0": "2026-09-24",
  "v21.0": "2027-01-21",
  "v22.0": "2027-05-20",
  "v23.0": "2027-10-08",
  "v24.0": "2028-02-18",
  "v25.0": "2028-07-29"
}

/** LinkedIn's published sunset dates (its migrations table), where they are not the computed 15th. */
export const linkedinSunsets: Readonly<Record<string, string>> = {
  "202510": "2026-10-15",
  "202511": "2026-11-16",
  "202601": "2027-01-15",
  "202602": "2027-02-15",
  "202603": "2027-03-16"
}

export const isLinkedInVersion = (version: string): boolean => /^\d{6}(\.\d{2})?$/.test(version)
export const isGraphVersion = (version: string): boolean => /^v\d+\.\d+$/.test(version)

/** When a version stops being served, where known. */
export const sunsetOf = (api: "linkedin" | "graph", version: string): DateTime.Utc | undefined => {
  if (api === "linkedin") {
    if (!isLinkedInVersion(version)) return undefined
    const published = linkedinSunsets[version.slice(0, 6)]
    if (published !== undefined) return DateTime.unsafeMake(`${published}T00:00:00Z`)
    const year = Number(version.slice(0, 4))
    const month = Number(version.slice(4, 6))
    if (month < 1 || month > 12) return undefined
    return DateTime.unsafeMake(Date.UTC(year + 1, month - 1, 15))
  }
  const date = graphSunsets[version]
  return date === undefined ? undefined : DateTime.unsafeMake(`${date}T00:00:00Z`)
}

export interface Configured {
  readonly linkedin: string
  readonly graph: string
}

/** The versions configured in the environment, defaults where unset or malformed. */
export const fromEnv = (env: Readonly<Record<string, string | undefined>>): Configured & {
  readonly ignored: ReadonlyArray<string>
} => {
  const linkedin = env[linkedinSetting]?.trim() ?? ""
  const graph = env[graphSetting]?.trim() ?? ""
  const ignored: Array<string> = []
  if (linkedin !== "" && !isLinkedInVersion(linkedin)) {
    ignored.push(`${linkedinSetting}=${linkedin} is not a LinkedIn version (YYYYMM); using ${defaultLinkedInVersion}`)
  }
  if (graph !== "" && !isGraphVersion(graph)) {
    ignored.push(`${graphSetting}=${graph} is not a Graph API version (vNN.N); using ${defaultGraphVersion}`)
  }
  return {
    linkedin: linkedin !== "" && isLinkedInVersion(linkedin) ? linkedin : defaultLinkedInVersion,
    graph: graph !== "" && isGraphVersion(graph) ? graph : defaultGraphVersion,
    ignored
  }
}

/** Warnings for versions within `warnWithinDays` of their sunset, or past it, at `now`. */
export const sunsetWarnings = (configured: Configured, now: DateTime.Utc): ReadonlyArray<string> => {
  const out: Array<string> = []
  const check = (api: "linkedin" | "graph", name: string, version: string, setting: string) => {
    const sunset = sunsetOf(api, version)
    if (sunset === undefined) return
    const days = Math.floor((DateTime.toEpochMillis(sunset) - DateTime.toEpochMillis(now)) / 86_400_000)
    const date = DateTime.formatIso(sunset).slice(0, 10)
    if (days < 0) {
      out.push(`${name} version ${version} reached its sunset on ${date}; raise ${setting} to a current version`)
    } else if (days <= warnWithinDays) {
      out.push(`${name} version ${version} sunsets on ${date} (in ${days} days); raise ${setting} to a newer version`)
    }
  }
  check("linkedin", "LinkedIn", configured.linkedin, linkedinSetting)
  check("graph", "Graph API", configured.graph, graphSetting)
  return out
}

/** The sentence a "version no longer served" error ends with. */
export const raiseHint = (api: "linkedin" | "graph", version?: string): string => {
  const which = version === undefined ? "the configured version" : `version ${version}`
  return api === "linkedin"
    ? `configuration: LinkedIn no longer serves ${which}; set ${linkedinSetting} to a current version (YYYYMM)`
    : `configuration: Meta no longer serves ${which} of the Graph API; set ${graphSetting} to a current version (vNN.N)`
}
