// msgload report.html: draws each figure.chart[data-kind=lines] with uPlot from
// its JSON block (reports/plot.go writes both). Drag to zoom, double-click to
// reset, hover (or tap) for the values in the legend. Limits and thresholds
// are drawn across the plot; one beyond the data's reach (plot.go's markReach)
// is an arrow at the edge, labelled, so the data keep the whole height.
document.addEventListener("DOMContentLoaded", function () {
	"use strict";
	var trim = function (v) { return String(Number(v.toPrecision(3))); };
	function dur(v) {
		var a = Math.abs(v);
		if (a === 0) return "0";
		if (a < 1e-3) return trim(v * 1e6) + "µs";
		if (a < 1) return trim(v * 1e3) + "ms";
		if (a < 120) return trim(v) + "s";
		return trim(v / 60) + "m";
	}
	function fmt(unit, v) {
		if (v == null || !isFinite(v)) return "–";
		if (unit === "s") return dur(v);
		if (unit === "share") return Math.round(v * 100) + "%";
		return Math.abs(v) >= 1e4 ? Math.round(v).toLocaleString("en") : String(Math.round(v * 100) / 100);
	}
	function marks(u, d, fig) {
		var ctx = u.ctx, b = u.bbox, px = uPlot.pxRatio, drawn = 0;
		ctx.save();
		ctx.font = Math.round(11 * px) + "px system-ui,sans-serif";
		ctx.textBaseline = "bottom";
		d.marks.forEach(function (m) {
			var horiz = m.axis === "y";
			var lo = horiz ? b.top : b.left, hi = horiz ? b.top + b.height : b.left + b.width;
			var pos = m.off ? NaN : u.valToPos(m.at, horiz ? "y" : "x", true);
			ctx.strokeStyle = ctx.fillStyle = m.limit ? "#c53030" : "#1a202c";
			ctx.lineWidth = 1.4 * px;
			if (pos >= lo - 1 && pos <= hi + 1) {
				ctx.setLineDash(m.limit ? [5 * px, 3 * px] : [7 * px, 2 * px, 1.5 * px, 2 * px]);
				ctx.beginPath();
				if (horiz) { ctx.moveTo(b.left, pos); ctx.lineTo(b.left + b.width, pos); }
				else { ctx.moveTo(pos, b.top); ctx.lineTo(pos, b.top + b.height); }
				ctx.stroke();
				ctx.setLineDash([]);
				if (horiz) { ctx.textAlign = "right"; ctx.fillText(m.label, b.left + b.width - 4 * px, pos - 3 * px); }
				else {
					var right = pos > b.left + b.width / 2;
					ctx.textAlign = right ? "right" : "left";
					ctx.fillText(m.label, pos + (right ? -4 : 4) * px, b.top + 14 * px);
				}
			} else {
				// Off the chart (by the data's reach, or zoomed away): an arrow at the edge it lies beyond.
				var past = m.off || (horiz ? pos < lo : pos > hi);
				var arrow = horiz ? (past ? "↑ " : "↓ ") : (past ? "→ " : "← ");
				ctx.textAlign = horiz || !past ? "left" : "right";
				var x = horiz ? b.left + 6 * px : (past ? b.left + b.width - 4 * px : b.left + 4 * px);
				var y = horiz ? (past ? b.top + 14 * px : b.top + b.height - 4 * px) : b.top + 14 * px;
				ctx.fillText(arrow + m.label + " (off the chart)", x, y);
			}
			if (!m.limit) drawn++;
		});
		ctx.restore();
		fig.setAttribute("data-marks", String(drawn));
	}
	// lone is uPlot's points.filter: the indices of the points of series si with no point
	// beside them (null when there is none: no dot drawn).
	function lone(u, si) {
		var y = u.data[si], out = [];
		for (var i = 0; i < y.length; i++) {
			if (y[i] != null && (i === 0 || y[i - 1] == null) && (i === y.length - 1 || y[i + 1] == null)) out.push(i);
		}
		return out.length ? out : null;
	}
	function draw(fig) {
		var d = JSON.parse(fig.querySelector("script[type='application/json']").textContent);
		var box = fig.querySelector(".plot");
		var height = function () { return Math.max(180, Math.min(280, Math.round(box.clientWidth * 0.42))); };
		var series = [{ label: d.xLabel, value: function (u, v) { return fmt(d.xUnit, v); } }];
		var data = [d.x], drawn = 0;
		d.series.forEach(function (s) {
			// A null is a gap, as in the SVG: no requests then, or a percentile among requests with
			// no answer (the chart's note) — never bridged. A point with a gap on each side would
			// draw nothing as a line: it is drawn as a dot (lone).
			series.push({ label: s.name, stroke: s.color, width: 1.6, dash: s.dash || undefined, spanGaps: false,
				points: { show: false, filter: lone }, value: function (u, v) { return fmt(d.yUnit, v); } });
			data.push(s.y);
			if (s.y.some(function (v) { return v != null; })) drawn++;
		});
		var yRange = d.yUnit === "share" ? [0, 1] : function (u, min, max) {
			var top = Math.max(max || 0, d.yTop || 0);
			return [0, top > 0 ? top * 1.06 : 1];
		};
		var ticks = function (unit) { return function (u, vs) { return vs.map(function (v) { return fmt(unit, v); }); }; };
		var axisFont = "11px system-ui,sans-serif", labelFont = "12px system-ui,sans-serif";
		var u = new uPlot({
			width: box.clientWidth || 600, height: height(),
			series: series,
			scales: { x: { time: false }, y: { range: yRange } },
			axes: [
				{ label: d.xLabel, values: ticks(d.xUnit), font: axisFont, labelFont: labelFont, labelSize: 18 },
				{ label: d.yLabel, values: ticks(d.yUnit), font: axisFont, labelFont: labelFont, labelSize: 18, size: 54 },
			],
			cursor: { drag: { x: true, y: false } },
			hooks: { draw: [function (u) { marks(u, d, fig); }] },
		}, data, box);
		var w = box.clientWidth;
		window.addEventListener("resize", function () {
			if (box.clientWidth !== w) { w = box.clientWidth; u.setSize({ width: w, height: height() }); }
		});
		fig.setAttribute("data-drawn", String(drawn));
	}
	document.querySelectorAll("figure.chart[data-kind=lines]").forEach(function (fig) {
		try { draw(fig); } catch (e) { fig.setAttribute("data-error", String(e)); console.error("chart " + fig.id + ": " + e); }
	});
	document.body.setAttribute("data-charts", "drawn");
});
