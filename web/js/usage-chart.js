/**
 * @module usage-chart
 * A key's requests per month as an inline SVG bar chart, drawn here: no chart library.
 * One row per month (label left, bar right), so month names never run into each other,
 * whatever their length in the language shown; the plan's monthly limit is a dashed line.
 * The chart is drawn at the pixel width it is shown at, so its text keeps its size on a
 * phone. The SVG has a title and a description listing every value, for screen readers.
 */
import { svg } from './dom.js';
import { currentLanguage, formatNumber, t } from './i18n.js';

const ROW = 26;
const MARGIN = { top: 30, right: 16, bottom: 28, left: 8 };
const FONT_PX = 12;

/**
 * @param {{ name: string, limit: number | null, months: { month: string, used: number }[] }} data
 * @param {number} width the width in CSS pixels the chart is shown at
 */
export function usageChart(data, width, idPrefix = 'chart') {
  const labels = data.months.map((m) => monthLabel(m.month));
  const valueTexts = data.months.map((m) => formatNumber(m.used));
  const labelWidth = Math.ceil(Math.max(...labels.map(textWidth))) + 12;
  const valueWidth = Math.ceil(Math.max(...valueTexts.map(textWidth))) + 8;
  const height = MARGIN.top + data.months.length * ROW + MARGIN.bottom;
  const left = MARGIN.left + labelWidth;
  const right = width - MARGIN.right - valueWidth;
  const plotWidth = Math.max(40, right - left);

  const maxUsed = Math.max(0, ...data.months.map((m) => m.used));
  // At least 10, so a handful of requests does not fill the chart and the ticks stay whole.
  const top = niceCeiling(Math.max(10, maxUsed, data.limit ?? 0));
  const x = (value) => left + (value / top) * plotWidth;
  const rowY = (i) => MARGIN.top + i * ROW;
  const plotBottom = rowY(data.months.length);

  const values = data.months.map((_, i) => `${labels[i]}: ${valueTexts[i]}`).join(', ');
  const chart = svg('svg', {
    viewBox: `0 0 ${width} ${height}`,
    width,
    height,
    role: 'img',
    'aria-labelledby': `${idPrefix}-title ${idPrefix}-desc`,
    class: 'usage-chart',
  });
  chart.append(
    svg('title', { id: `${idPrefix}-title` }, t('chart.title', { name: data.name })),
    svg('desc', { id: `${idPrefix}-desc` }, t('chart.desc', { values })),
  );

  for (const tick of [0, top / 2, top]) {
    chart.append(
      svg('line', { class: 'grid', x1: x(tick), x2: x(tick), y1: MARGIN.top, y2: plotBottom }),
      svg(
        'text',
        {
          class: 'axis-label',
          x: x(tick),
          y: plotBottom + 18,
          'text-anchor': tick === 0 ? 'start' : tick === top ? 'end' : 'middle',
        },
        formatNumber(Math.round(tick)),
      ),
    );
  }

  data.months.forEach((m, i) => {
    const current = i === data.months.length - 1;
    const y = rowY(i);
    chart.append(
      svg(
        'text',
        { class: 'axis-label', x: left - 8, y: y + ROW / 2 + 4, 'text-anchor': 'end' },
        labels[i],
      ),
      svg('rect', {
        class: current ? 'bar current' : 'bar',
        x: left,
        y: y + 5,
        width: Math.max(0, x(m.used) - left),
        height: ROW - 10,
        'data-month': m.month,
        'data-used': m.used,
      }),
      svg(
        'text',
        { class: 'value-label', x: x(m.used) + 4, y: y + ROW / 2 + 4, 'text-anchor': 'start' },
        valueTexts[i],
      ),
    );
  });

  if (data.limit !== null) {
    const at = x(data.limit);
    chart.append(
      svg('line', {
        class: 'limit',
        x1: at,
        x2: at,
        y1: MARGIN.top - 6,
        y2: plotBottom,
        'data-limit': data.limit,
      }),
      svg(
        'text',
        {
          class: 'limit-label',
          x: at,
          y: MARGIN.top - 12,
          'text-anchor': at > left + plotWidth / 2 ? 'end' : 'start',
        },
        t('chart.limit', { limit: formatNumber(data.limit) }),
      ),
    );
  }
  return chart;
}

/** 10, 20, 50, 100, 200, ... at or above `value` (≥ 10). */
export function niceCeiling(value) {
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 5, 10]) {
    if (step * power >= value) return step * power;
  }
  return 10 * power;
}

let measure;
/** The width of `text` in the chart's font, in CSS pixels. */
export function textWidth(text) {
  measure ??= document.createElement('canvas').getContext('2d');
  measure.font = `${FONT_PX}px ${getComputedStyle(document.documentElement).fontFamily}`;
  return measure.measureText(text).width;
}

function monthLabel(month) {
  const [year, number] = month.split('-').map(Number);
  return new Intl.DateTimeFormat(currentLanguage(), {
    month: 'short',
    year: 'numeric',
    timeZone: 'UTC',
  }).format(Date.UTC(year, number - 1, 1));
}
