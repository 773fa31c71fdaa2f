/**
 * @module usage-chart
 * A key's requests per month as an inline SVG bar chart, drawn here: no chart library.
 * The SVG has a title and a description listing every value, for screen readers.
 */
import { svg } from './dom.js';
import { currentLanguage, formatNumber, t } from './i18n.js';

const WIDTH = 640;
const HEIGHT = 260;
const MARGIN = { top: 24, right: 16, bottom: 36, left: 56 };

/** @param {{ name: string, limit: number | null, months: { month: string, used: number }[] }} data */
export function usageChart(data, idPrefix = 'chart') {
  const plotWidth = WIDTH - MARGIN.left - MARGIN.right;
  const plotHeight = HEIGHT - MARGIN.top - MARGIN.bottom;
  const maxUsed = Math.max(0, ...data.months.map((m) => m.used));
  // The limit line is drawn when usage comes near it; far below, the bars would be flat.
  const showLimit = data.limit !== null && maxUsed >= data.limit * 0.5;
  // At least 10, so a handful of requests does not fill the chart and the ticks stay whole.
  const top = niceCeiling(Math.max(10, maxUsed, showLimit ? data.limit : 0));
  const y = (value) => MARGIN.top + plotHeight - (value / top) * plotHeight;
  const band = plotWidth / data.months.length;

  const labels = data.months.map((m) => monthLabel(m.month));
  const values = data.months.map((m, i) => `${labels[i]}: ${formatNumber(m.used)}`).join(', ');
  const chart = svg('svg', {
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
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
      svg('line', {
        class: 'grid',
        x1: MARGIN.left,
        x2: WIDTH - MARGIN.right,
        y1: y(tick),
        y2: y(tick),
      }),
      svg(
        'text',
        { class: 'axis-label', x: MARGIN.left - 8, y: y(tick) + 4, 'text-anchor': 'end' },
        formatNumber(Math.round(tick)),
      ),
    );
  }

  data.months.forEach((m, i) => {
    const x = MARGIN.left + i * band + band * 0.2;
    const current = i === data.months.length - 1;
    chart.append(
      svg('rect', {
        class: current ? 'bar current' : 'bar',
        x,
        y: y(m.used),
        width: band * 0.6,
        height: Math.max(0, MARGIN.top + plotHeight - y(m.used)),
        'data-month': m.month,
        'data-used': m.used,
      }),
      svg(
        'text',
        {
          class: 'axis-label',
          x: x + band * 0.3,
          y: HEIGHT - MARGIN.bottom + 18,
          'text-anchor': 'middle',
        },
        labels[i],
      ),
    );
    if (m.used > 0) {
      chart.append(
        svg(
          'text',
          { class: 'value-label', x: x + band * 0.3, y: y(m.used) - 6, 'text-anchor': 'middle' },
          formatNumber(m.used),
        ),
      );
    }
  });

  if (showLimit) {
    chart.append(
      svg('line', {
        class: 'limit',
        x1: MARGIN.left,
        x2: WIDTH - MARGIN.right,
        y1: y(data.limit),
        y2: y(data.limit),
      }),
      svg(
        'text',
        {
          class: 'limit-label',
          x: WIDTH - MARGIN.right,
          y: y(data.limit) - 6,
          'text-anchor': 'end',
        },
        t('chart.limit', { limit: formatNumber(data.limit) }),
      ),
    );
  }
  return chart;
}

/** 10, 20, 50, 100, 200, ... at or above `value` (≥ 10). */
function niceCeiling(value) {
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 5, 10]) {
    if (step * power >= value) return step * power;
  }
  return 10 * power;
}

function monthLabel(month) {
  const [year, number] = month.split('-').map(Number);
  return new Intl.DateTimeFormat(currentLanguage(), {
    month: 'short',
    year: '2-digit',
    timeZone: 'UTC',
  }).format(Date.UTC(year, number - 1, 1));
}
