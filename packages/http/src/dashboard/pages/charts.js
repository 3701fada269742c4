// Bar charts drawn by Chart.js (served by Herald from the installed package, see Dashboard.ts), each
// inside a figure with its table: the table is the chart's text equivalent and carries every figure
// (a canvas is a picture to a screen reader, so it is labelled as one and points to the table).
import { h } from "../ui.js"

let loading

/** Chart.js, loaded on first use (about 200 kB: only the analytics page asks for it). */
export const loadChart = () => {
  // Served from the installed chart.js package (Dashboard.ts), not from this folder: the path is a URL.
  const url = new URL("../vendor/chart.umd.min.js", import.meta.url)
  loading ??= import(url.href).then(() => {
    if (typeof globalThis.Chart !== "function") throw new Error("the chart library did not load")
    return globalThis.Chart
  })
  return loading
}

/** Colours told apart by people with the common colour-vision deficiencies (Okabe and Ito's palette). */
export const palette = ["#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#f0e442", "#000000"]

export const statusColours = {
  draft: "#8c959f",
  scheduled: "#0072b2",
  publishing: "#e69f00",
  published: "#009e73",
  partially_failed: "#d55e00",
  failed: "#cc0000"
}

export const numberFormat = new Intl.NumberFormat()

let counter = 0

/**
 * A figure: caption, a canvas for the chart (labelled as an image whose figures are in the table
 * that follows), and the table. Returns `{ el, draw }`: `draw(Chart)` draws the chart once the figure
 * is in the page (Chart.js sizes the canvas from its container).
 */
export const chartFigure = ({ title, labels, datasets, table, stacked = false, horizontal = false }) => {
  const id = `chart-${++counter}`
  const canvas = h("canvas", {
    id,
    role: "img",
    "aria-label": `${title}: a bar chart; the table below gives its figures.`
  })
  const holder = h("div", { class: horizontal ? "chart horizontal" : "chart" }, canvas)
  const el = h(
    "figure",
    { class: "chart-figure", "aria-labelledby": `${id}-caption` },
    h("figcaption", { id: `${id}-caption` }, title),
    holder,
    table
  )
  // A horizontal chart grows with its bars (and a legend that wraps on a phone), so no bar is a hairline.
  if (horizontal) holder.style.height = `${6 + labels.length * Math.max(1.5, datasets.length * 0.6)}rem`
  const draw = (Chart) =>
    new Chart(canvas, {
      type: "bar",
      data: {
        labels,
        datasets: datasets.map((d, i) => ({
          label: d.label,
          data: d.data,
          backgroundColor: d.colour ?? palette[i % palette.length],
          borderWidth: 0
        }))
      },
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        indexAxis: horizontal ? "y" : "x",
        scales: {
          x: { stacked, ...(horizontal ? { beginAtZero: true, ticks: { precision: 0 } } : {}) },
          y: { stacked, ...(horizontal ? {} : { beginAtZero: true, ticks: { precision: 0 } }) }
        },
        plugins: { legend: { position: "bottom", display: datasets.length > 1 } }
      }
    })
  return { el, draw }
}
