/**
 * @module day-chart
 * A key's requests on each day of the current month as an inline SVG column chart: one
 * slot per day of the month (the days to come stay empty, so the axis does not move as
 * the month goes on), today's slot tinted and its column highlighted, a label under every 7th day from the
 * 1st so labels stay apart on a phone. Like the month chart it is drawn at the pixel width
 * it is shown at; its title and description name every day's count for screen readers,
 * and each column has a tooltip with its date and count.
 */
import { svg } from './dom.js';
import { currentLanguage, formatNumber, t } from './i18n.js';
import { niceCeiling, textWidth } from './usage-chart.js';

const MARGIN = { top: 12, right: 12, bottom: 26, left: 8 };
const PLOT_HEIGHT = 140;
const LABEL_EVERY = 7;

/**
 * @param {{ name: string, days: { date: string, used: number }[], daysInMonth: number }} data
 * @param {number} width the width in CSS pixels the chart is shown at
 */
export function dayChart(data, width, idPrefix = 'day-chart') {
  const maxUsed = Math.max(0, ...data.days.map((d) => d.used));
  // At least 10, so a handful of requests does not fill the chart and the ticks stay whole.
  const top = niceCeiling(Math.max(10, maxUsed));
  const tickTexts = [0, top / 2, top].map((tick) => formatNumber(Math.round(tick)));
  const left = MARGIN.left + Math.ceil(Math.max(...tickTexts.map(textWidth))) + 6;
  const plotWidth = Math.max(60, width - MARGIN.right - left);
  const slot = plotWidth / data.daysInMonth;
  const height = MARGIN.top + PLOT_HEIGHT + MARGIN.bottom;
  const plotBottom = MARGIN.top + PLOT_HEIGHT;
  const y = (value) => plotBottom - (value / top) * PLOT_HEIGHT;

  const values = data.days.map((d) => `${dateLabel(d.date)}: ${formatNumber(d.used)}`).join(', ');
  const chart = svg('svg', {
    viewBox: `0 0 ${width} ${height}`,
    width,
    height,
    role: 'img',
    'aria-labelledby': `${idPrefix}-title ${idPrefix}-desc`,
    class: 'usage-chart day-chart',
  });
  chart.append(
    svg('title', { id: `${idPrefix}-title` }, t('days.title', { name: data.name })),
    svg('desc', { id: `${idPrefix}-desc` }, t('chart.desc', { values })),
  );

  [0, top / 2, top].forEach((tick, i) => {
    chart.append(
      svg('line', { class: 'grid', x1: left, x2: left + plotWidth, y1: y(tick), y2: y(tick) }),
      svg(
        'text',
        { class: 'axis-label', x: left - 6, y: y(tick) + 4, 'text-anchor': 'end' },
        tickTexts[i],
      ),
    );
  });

  const gap = Math.min(2, slot * 0.2);
  // Today's slot is tinted, so where the month stands shows also before any request.
  const todayIndex = data.days.length - 1;
  if (todayIndex >= 0) {
    chart.append(
      svg('rect', {
        class: 'today',
        x: left + todayIndex * slot,
        y: MARGIN.top,
        width: slot,
        height: PLOT_HEIGHT,
      }),
    );
  }
  data.days.forEach((d, i) => {
    const today = i === todayIndex;
    const bar = svg('rect', {
      class: today ? 'bar current' : 'bar',
      x: left + i * slot + gap / 2,
      y: y(d.used),
      width: Math.max(1, slot - gap),
      height: plotBottom - y(d.used),
      'data-date': d.date,
      'data-used': d.used,
    });
    bar.append(svg('title', {}, `${dateLabel(d.date)}: ${formatNumber(d.used)}`));
    chart.append(bar);
  });

  for (let day = 1; day <= data.daysInMonth; day += LABEL_EVERY) {
    chart.append(
      svg(
        'text',
        {
          class: 'axis-label day-label',
          x: left + (day - 0.5) * slot,
          y: plotBottom + 18,
          'text-anchor': 'middle',
        },
        dayNumber(day),
      ),
    );
  }
  return chart;
}

/** The day of the month as a number, in the language shown. */
function dayNumber(day) {
  return new Intl.DateTimeFormat(currentLanguage(), { day: 'numeric', timeZone: 'UTC' }).format(
    Date.UTC(2000, 0, day),
  );
}

/** `Mar 15` in English, `15. März` in German. */
export function dateLabel(date) {
  const [year, month, day] = date.split('-').map(Number);
  return new Intl.DateTimeFormat(currentLanguage(), {
    day: 'numeric',
    month: 'short',
    timeZone: 'UTC',
  }).format(Date.UTC(year, month - 1, day));
}
