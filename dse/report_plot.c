/* report_plot.c: the SVG plots of dse report (dse/report_sweep.c reads the sweep and
 * writes the tables): accuracy (or the other cost) against model size or forward FLOPs
 * with the Pareto frontier, several sweeps' frontiers on one plot, and learning curves.
 * Labels placed so that they overlap neither each other nor the points; files written
 * through a temporary file. Formats: docs/report.md. */
#include "dse/report_impl.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "base/fs.h"
#include "sweep/sweep.h"

/* ---- the plot ---------------------------------------------------------------------- */

#define SVG_W 860
#define SVG_H 600

struct axis {
    double lo, hi;          /* domain shown */
    double step;            /* tick spacing: 1, 2 or 5 times a power of 10 */
    int    decimals;        /* for tick labels */
    double p0, p1;          /* pixels for lo and hi */
};

/* Domain = data range plus 5% each side (a single value or equal values get a range
 * around them), ticks at multiples of a 1-2-5 step, about 5 to 10 of them. */
static void axis_fit(struct axis *a, double lo, double hi, double p0, double p1) {
    if (!(lo <= hi) || !isfinite(lo) || !isfinite(hi)) lo = 0.0, hi = 1.0;
    double range = hi - lo;
    if (range <= fabs(hi) * 1e-9 || range == 0.0) {
        double d = fabs(hi) > 0.0 ? fabs(hi) * 0.1 : 1.0;
        lo -= d, hi += d;
    } else {
        lo -= 0.05 * range, hi += 0.05 * range;
    }
    double raw = (hi - lo) / 6.0, mag = pow(10.0, floor(log10(raw))), fr = raw / mag;
    a->step = (fr < 1.5 ? 1.0 : fr < 3.5 ? 2.0 : fr < 7.5 ? 5.0 : 10.0) * mag;
    a->decimals = (int)-floor(log10(a->step) + 1e-9);
    if (a->decimals < 0) a->decimals = 0;
    a->lo = lo, a->hi = hi, a->p0 = p0, a->p1 = p1;
}

static double axis_px(const struct axis *a, double v) {
    return a->p0 + (v - a->lo) / (a->hi - a->lo) * (a->p1 - a->p0);
}

static void svg_text(FILE *f, const char *s) {
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        default:
            if ((unsigned char)*s >= 0x20 || *s == '\t') fputc(*s, f);
        }
    }
}

struct pt {
    const struct dse_cand *c;
    double             px, py;
    int                band;    /* drawn in the "not trained" strip */
    int                front;   /* on the frontier of the plot's view */
    char               label[160];
    char               alt[24]; /* "#<index>": drawn instead where the label has no room */
    int                use_alt;
};

struct box { double x0, y0, x1, y1; };

static double overlap(struct box a, struct box b) {
    double w = fmin(a.x1, b.x1) - fmax(a.x0, b.x0), h = fmin(a.y1, b.y1) - fmax(a.y0, b.y0);
    return w > 0 && h > 0 ? w * h : 0.0;
}

/* Cost of covering part of the frontier line: samples every 3 px along each segment. */
static double line_cost(struct box b, const double *fx, const double *fy, int nf) {
    double cost = 0.0;
    for (int k = 0; k + 1 < nf; k++) {
        double len = hypot(fx[k + 1] - fx[k], fy[k + 1] - fy[k]);
        int    steps = (int)(len / 3.0) + 1;
        for (int t = 0; t <= steps; t++) {
            double x = fx[k] + (fx[k + 1] - fx[k]) * t / steps;
            double y = fy[k] + (fy[k + 1] - fy[k]) * t / steps;
            if (x >= b.x0 && x <= b.x1 && y >= b.y0 && y <= b.y1) cost += 8.0;
        }
    }
    return cost;
}

/* Label placement, greedy: frontier points first, then the others in x order, then the
 * "not trained" strip. Each label takes the candidate position that overlaps least with
 * labels already placed, with points, with error bars (bars, nb boxes), with the frontier
 * line and with the frame edge, its width measured (dse_report_text_width; frontier labels
 * are bold); ties go to the preferred position, which alternates above/below from point
 * to point. A label with no position free of labels, points, error bars and the edge is
 * drawn as its short form "#<index>" where that has one, else left out (anchor -1): the
 * point's tooltip still names it. fx, fy: the frontier line, nf points. */
static void place_labels(struct pt *p, int n, double fs, struct box frame, const struct box *bars, int nb,
                         const double *fx, const double *fy, int nf, double *lx, double *ly, int *anchor) {
    static const struct { double dx, dy; int anchor; } pos[] = {
        { 8, -7, 0 }, { 8, 15, 0 }, { -8, -7, 2 }, { -8, 15, 2 }, { 0, -11, 1 }, { 0, 21, 1 },
        { 8, -19, 0 }, { 8, 27, 0 }, { -8, -19, 2 }, { -8, 27, 2 },
    };
    struct box *placed = malloc(sizeof *placed * (size_t)(n ? n : 1));
    int        *order = malloc(sizeof *order * (size_t)(n ? n : 1));
    if (!placed || !order) { /* fall back to alternating offsets */
        for (int i = 0; i < n; i++) {
            lx[i] = p[i].px + 8, ly[i] = p[i].py + (i % 2 ? 15 : -7), anchor[i] = 0;
        }
        free(placed), free(order);
        return;
    }
    int m = 0;
    for (int pass = 0; pass < 3; pass++)
        for (int i = 0; i < n; i++)
            if ((pass == 0 && p[i].front) || (pass == 1 && !p[i].front && !p[i].band)
                || (pass == 2 && p[i].band))
                order[m++] = i;
    int np = 0;
    for (int r = 0; r < m; r++) {
        int        i = order[r];
        double     best = INFINITY, clash = INFINITY; /* clash: overlap with labels, points, bars, edge */
        int        bk = 0;
        struct box bb = { 0, 0, 0, 0 };
        p[i].use_alt = 0;
        for (int form = 0; form < 2 && clash > 0; form++) {
            if (form == 1 && (!p[i].alt[0] || p[i].band)) break;
            const double w = dse_report_text_width(form ? p[i].alt : p[i].label, fs, p[i].front);
            best = INFINITY;
            for (int t = 0; t < DSE_ARRAY_LEN(pos); t++) {
                int    k = (r % 2 && t < 2) ? 1 - t : t; /* every other point tries below first */
                double x = p[i].px + pos[k].dx, y = p[i].py + pos[k].dy;
                double x0 = pos[k].anchor == 0 ? x : pos[k].anchor == 1 ? x - w / 2 : x - w;
                struct box b = { .x0 = x0, .y0 = y - fs * 0.8, .x1 = x0 + w, .y1 = y + fs * 0.25 };
                double hard = 0.0;
                for (int j = 0; j < np; j++) hard += overlap(b, placed[j]);
                for (int j = 0; j < n; j++) {
                    struct box c = { .x0 = p[j].px - 6, .y0 = p[j].py - 6, .x1 = p[j].px + 6, .y1 = p[j].py + 6 };
                    hard += 2.0 * overlap(b, c);
                }
                for (int j = 0; j < nb; j++) hard += 4.0 * overlap(b, bars[j]);
                hard += 4.0 * ((b.x1 - b.x0) * (b.y1 - b.y0) - overlap(b, frame));
                const double cost = hard + line_cost(b, fx, fy, nf) + 0.01 * t;
                if (cost < best) best = cost, clash = hard, bk = k, bb = b;
            }
            p[i].use_alt = form;
        }
        if (clash > 0 && (p[i].band || p[i].use_alt || !p[i].alt[0])) {
            anchor[i] = -1;
            continue;
        }
        placed[np++] = bb;
        lx[i] = p[i].px + pos[bk].dx;
        ly[i] = p[i].py + pos[bk].dy;
        anchor[i] = pos[bk].anchor;
    }
    free(placed);
    free(order);
}

static void svg_circle(FILE *f, const struct pt *p, const char *style) {
    fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" %s><title>", p->px, p->py, style);
    svg_text(f, p->c->rec.id);
    fputs(" ", f);
    svg_text(f, p->label);
    fputs("</title></circle>\n", f);
}

/* One row under the title: symbol, then text, left to right (text width estimated at
 * 0.55 em per character, generous for the generic sans-serif faces). */
/* Only the kinds the plot shows get an entry. */
static void write_legend(FILE *f, const struct dse_sweep_view *s, double x, double y, int plain, int front, int band,
                         int limit, int estimated) {
    int pruned = 0, stopped = 0;
    for (int i = 0; i < s->n; i++) pruned |= s->c[i].rec.status == DSE_REC_PRUNED, stopped |= s->c[i].rec.status == DSE_REC_STOPPED;
    const char *text[7] = { "candidate", "Pareto frontier", "pruned", "not trained (no top-1)",
                            "stopped early (top-1 at its rung)", "space limit", "no .dsez yet (its estimated size)" };
    int         show[7] = { plain, front, pruned, band, stopped, limit, estimated };
    static const char *const style[7] = {
        "fill=\"#4c78a8\"",
        "fill=\"#d62728\" stroke=\"#7f1416\"",
        "fill=\"none\" stroke=\"#999\" stroke-width=\"1.5\"",
        "fill=\"#4c78a8\" fill-opacity=\"0.45\" stroke=\"#4c78a8\"",
        "fill=\"white\" stroke=\"#4c78a8\" stroke-width=\"1.8\"",
        NULL,
        "fill=\"white\" stroke=\"#4c78a8\" stroke-width=\"1.2\" stroke-dasharray=\"2 2\"",
    };
    fputs("<g font-size=\"12\" fill=\"#333\">\n", f);
    for (int k = 0; k < 7; k++) {
        if (!show[k]) continue;
        double cx = x + 6, cy = y - 4;
        if (k == 1)
            fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#d62728\" "
                       "stroke-width=\"2\"/>\n", cx - 8, cy, cx + 8, cy);
        if (k == 5) {
            fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#8c564b\" "
                       "stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>\n<text x=\"%.1f\" y=\"%.1f\">%s</text>\n",
                    cx - 8, cy, cx + 8, cy, x + 18, y, text[k]);
            x += 18 + 6.6 * (double)strlen(text[k]) + 22;
            continue;
        }
        /* a circle drawn as a path: <circle> elements are the candidates, one each */
        fprintf(f, "<path d=\"M%.1f %.1fa5 5 0 1 0 10 0a5 5 0 1 0 -10 0z\" %s/>\n", cx - 5, cy,
                style[k]);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", x + 18, y, text[k]);
        x += 18 + 6.6 * (double)strlen(text[k]) + 22;
    }
    fputs("</g>\n", f);
}

/* One axis's ticks: at each, a grid line across the plot, a 5-pixel mark outside the axis
 * line and the value. The x axis's stand on axis_y (grid up to top, value below, centred),
 * the y axis's on left (grid across to right, value to its left, right-aligned). */
static void svg_ticks(FILE *f, const struct axis *a, int x_axis, double left, double right, double top,
                      double axis_y) {
    for (double k = ceil(a->lo / a->step - 1e-9); k * a->step <= a->hi + 1e-9 * a->step; k++) {
        double v = k * a->step;
        const double p = axis_px(a, v);
        if (fabs(v) < a->step * 1e-9) v = 0.0;
        /* x1, y1, x2, y2 of the grid line and of the mark */
        const double xs[2][4] = {{p, top, p, axis_y}, {p, axis_y, p, axis_y + 5}};
        const double ys[2][4] = {{left, p, right, p}, {left - 5, p, left, p}};
        const double(*l)[4] = x_axis ? xs : ys;
        for (int i = 0; i < 2; i++)
            fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n", l[i][0], l[i][1],
                    l[i][2], l[i][3], i == 0 ? "#e6e6e6" : "#444");
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">%.*f</text>\n", x_axis ? p : left - 8,
                x_axis ? axis_y + 18 : p + 4, x_axis ? "middle" : "end", a->decimals, v);
    }
}

/* The grid and tick labels of both axes. */
static void svg_grid(FILE *f, const struct axis *ax, const struct axis *ay, double left, double right, double top,
                     double axis_y) {
    fputs("<g font-size=\"11\" fill=\"#444\">\n", f);
    svg_ticks(f, ax, 1, left, right, top, axis_y);
    svg_ticks(f, ay, 0, left, right, top, axis_y);
    fputs("</g>\n", f);
}

#define XLABEL_SIZE  "model size (MB = 10^6 bytes, 4 bytes per parameter)"
#define XLABEL_COMPRESSED "compressed size (MB = 10^6 bytes, the .dsez file)"
#define XLABEL_FLOPS "forward GFLOP per image (2 per multiply-add; GMAC = GFLOP / 2)"

/* The plotting area's frame and both axis labels. */
static void svg_frame(FILE *f, double left, double right, double top, double axis_y, double bottom,
                      const char *xlabel, const char *ylabel) {
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
               "stroke=\"#444\"/>\n", left, top, right - left, axis_y - top);
    fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"13\" text-anchor=\"middle\" fill=\"#222\">"
               "%s</text>\n", (left + right) / 2, SVG_H - 28, xlabel);
    fprintf(f, "<text transform=\"translate(22 %.1f) rotate(-90)\" font-size=\"13\" "
               "text-anchor=\"middle\" fill=\"#222\">%s</text>\n", (top + bottom) / 2, ylabel);
}

/* The frontier of points (x, y) in x order as a step: the best value within each size
 * holds until the next point. */
static void svg_step(FILE *f, const double *x, const double *y, int n, const char *color) {
    if (n <= 0) return;
    fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" stroke-linejoin=\"round\" points=\"",
            color);
    for (int k = 0; k < n; k++) {
        if (k) fprintf(f, " %.1f,%.1f", x[k], y[k - 1]);
        fprintf(f, "%s%.1f,%.1f", k ? " " : "", x[k], y[k]);
    }
    fputs("\"/>\n", f);
}

/* The two views of a sweep's plot: model size on x (--plot) or forward FLOPs (--plot-flops).
 * y is top-1 once the sweep is trained, else the other cost. Each view has its frontier. */
enum plot_x { PLOT_X_SIZE, PLOT_X_FLOPS };

/* A candidate of a compressed-size plot without its .dsez yet: drawn hollow at its estimate. */
static int view_estimated(const struct dse_sweep_view *s, enum plot_x v, const struct dse_cand *c) {
    return v == PLOT_X_SIZE && s->compressed && c->rec.compressed_bytes < 0;
}

/* MB (as max_model_mb; under dse report --size compressed the .dsez's, else its estimate) or GFLOP */
static double view_x(const struct dse_sweep_view *s, enum plot_x v, const struct dse_cand *c) {
    if (v == PLOT_X_FLOPS) return (double)c->rec.flops / 1e9;
    if (!s->compressed) return (double)c->rec.model_bytes / 1e6;
    return (double)(c->rec.compressed_bytes >= 0 ? c->rec.compressed_bytes : c->rec.est_compressed_bytes) / 1e6;
}

/* Half an error bar on a trained plot's y axis (top-1 %): the replicates' standard deviation; 0 if none. */
static double bar(const struct dse_sweep_view *s, const struct dse_cand *c) {
    return s->trained && c->reps && !isnan(c->top1_std) ? 100.0 * c->top1_std : 0.0;
}

static double view_y(const struct dse_sweep_view *s, enum plot_x v, const struct dse_cand *c) {
    if (s->trained && v == PLOT_X_SIZE && s->compressed && c->rec.compressed_bytes >= 0)
        return 100.0 * c->rec.compressed_top1; /* the compressed model's, as the frontier ranks it */
    if (s->trained) return 100.0 * c->rec.top1;
    return v == PLOT_X_FLOPS ? (double)c->rec.model_bytes / 1e6 : (double)c->rec.flops / 1e9;
}

static const char *view_objective(const struct dse_sweep_view *s, enum plot_x v) {
    if (v == PLOT_X_SIZE) return dse_report_objective(s);
    return s->trained ? "max top1, min FLOPs" : "min FLOPs, min model size";
}

/* The view's frontier into out (indices into s->c, by increasing x); returns its size. The
 * size view's is the sweep's own (s->front). The FLOPs view's is computed on (top-1,
 * FLOPs), or before training on (FLOPs, model size), over the candidates the sweep's rule
 * ranks (dse_sweep_ranked). x, y, scratch: room for s->n each. */
static int view_front(const struct dse_sweep_view *s, enum plot_x v, double *x, double *y, int *out, int *scratch) {
    if (v == PLOT_X_SIZE) {
        for (int k = 0; k < s->n_front; k++) out[k] = (int)(s->front[k] - s->c);
        return s->n_front;
    }
    for (int i = 0; i < s->n; i++) {
        const struct dse_cand *c = &s->c[i];
        x[i] = dse_sweep_ranked(s, c) ? (double)c->rec.flops : NAN;
        y[i] = s->trained ? c->rec.top1 : (double)c->rec.model_bytes;
    }
    return dse_pareto_front(x, y, s->n, s->trained, out, scratch);
}

/* The points of the plot, in size order: each candidate's pixels (one without a top-1 in
 * the band at the foot), whether it is on the frontier (front[0 .. n_front - 1]), and its
 * label: the varied metaparameters, or its index. */
static void plot_points(const struct dse_sweep_view *s, enum plot_x view, const struct axis *ax, const struct axis *ay,
                        double axis_y, const int *front, int n_front, struct pt *p) {
    for (int i = 0; i < s->n; i++) {
        const struct dse_cand *c = s->by_size[i];
        char   vb[48];
        int    o = 0;
        p[i].c = c;
        p[i].band = s->trained && isnan(c->rec.top1);
        p[i].front = 0;
        for (int k = 0; k < n_front && !p[i].front; k++) p[i].front = &s->c[front[k]] == c;
        p[i].px = axis_px(ax, view_x(s, view, c));
        p[i].py = p[i].band ? axis_y - 24 : axis_px(ay, view_y(s, view, c));
        p[i].label[0] = '\0';
        for (int v = 0; v < s->n_varied && o < (int)sizeof p[i].label; v++)
            o += snprintf(p[i].label + o, sizeof p[i].label - (size_t)o, "%s%s=%s", v ? " " : "",
                          s->varied[v],
                          dse_report_fmt_value(vb, sizeof vb, s->varied[v], dse_json_get(c->metaparams, s->varied[v])));
        if (!s->n_varied) snprintf(p[i].label, sizeof p[i].label, "#%" PRId64, c->rec.index);
        dse_report_utf8_trim(p[i].label);
        snprintf(p[i].alt, sizeof p[i].alt, "#%" PRId64, c->rec.index);
        p[i].use_alt = 0;
    }
}

/* The SVG's head: its size, title, white ground, and the plot's title and subtitle (the
 * counts, replicates, the frontier's objective and size). */
static void plot_heading(FILE *f, const struct dse_sweep_view *s, enum plot_x view, int n_front) {
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
               "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n",
            SVG_W, SVG_H, SVG_W, SVG_H);
    fputs("<title>Sweep ", f);
    svg_text(f, s->space);
    fputs("</title>\n", f);
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"white\"/>\n", SVG_W, SVG_H);

    /* title, subtitle */
    fprintf(f, "<text x=\"%.1f\" y=\"26\" font-size=\"17\" font-weight=\"bold\" "
               "text-anchor=\"middle\" fill=\"#222\">Sweep ", SVG_W / 2.0);
    svg_text(f, s->space);
    fprintf(f, ": %s vs %s</text>\n", view == PLOT_X_FLOPS ? "forward FLOPs" : s->compressed ? "compressed size" : "model size",
            s->trained ? "top-1 accuracy" : view == PLOT_X_FLOPS ? "model size" : "forward FLOPs");
    char counts[200];
    dse_report_counts_text(counts, sizeof counts, s);
    char reps[80] = "";
    if (s->replicates > 1 && s->trained)
        snprintf(reps, sizeof reps, " x %d replicates, top-1 mean ± std", s->replicates);
    fprintf(f, "<text x=\"%.1f\" y=\"46\" font-size=\"12\" text-anchor=\"middle\" fill=\"#555\">"
               "%d %s%s%s (%s); frontier (%s): %d point%s</text>\n", SVG_W / 2.0, s->n,
            s->replicates > 1 ? "architecture" : "candidate", s->n == 1 ? "" : "s", reps, counts,
            view_objective(s, view), n_front, n_front == 1 ? "" : "s");
}

/* The points' marks: error bars (mean ± std of top-1 over the replicates), the points in
 * their style (pruned, no top-1, stopped, plain), then the frontier's on top. */
static void plot_marks(FILE *f, const struct dse_sweep_view *s, enum plot_x view, const struct axis *ay,
                       const struct pt *p) {
    for (int i = 0; i < s->n; i++) { /* error bars: mean ± std of top-1 over the replicates */
        double e = p[i].band ? 0 : bar(s, p[i].c);
        if (!(e > 0)) continue;
        double y0 = axis_px(ay, view_y(s, view, p[i].c) - e), y1 = axis_px(ay, view_y(s, view, p[i].c) + e);
        fprintf(f, "<path class=\"errbar\" d=\"M%.1f %.1fV%.1fM%.1f %.1fH%.1fM%.1f %.1fH%.1f\" stroke=\"%s\" "
                   "stroke-width=\"1.2\" fill=\"none\"/>\n", p[i].px, y0, y1, p[i].px - 4, y0, p[i].px + 4,
                p[i].px - 4, y1, p[i].px + 4, p[i].front ? "#7f1416" : "#4c78a8");
    }
    for (int i = 0; i < s->n; i++) {
        if (p[i].front) continue;
        if (view_estimated(s, view, p[i].c)) /* no .dsez yet: at its estimated size */
            svg_circle(f, &p[i], "r=\"5\" fill=\"white\" stroke=\"#4c78a8\" stroke-width=\"1.2\" stroke-dasharray=\"2 2\"");
        else if (p[i].c->rec.status == DSE_REC_PRUNED)
            svg_circle(f, &p[i], "r=\"5\" fill=\"none\" stroke=\"#999\" stroke-width=\"1.5\"");
        else if (p[i].band)
            svg_circle(f, &p[i], "r=\"5\" fill=\"#4c78a8\" fill-opacity=\"0.45\" stroke=\"#4c78a8\"");
        else if (p[i].c->rec.status == DSE_REC_STOPPED) /* its top-1 is from an earlier epoch */
            svg_circle(f, &p[i], "r=\"5\" fill=\"white\" stroke=\"#4c78a8\" stroke-width=\"1.8\"");
        else
            svg_circle(f, &p[i], "r=\"5\" fill=\"#4c78a8\" stroke=\"white\" stroke-width=\"1\"");
    }
    for (int i = 0; i < s->n; i++)
        if (p[i].front)
            svg_circle(f, &p[i], "r=\"6\" fill=\"#d62728\" stroke=\"#7f1416\" stroke-width=\"1\"");
}

/* p, lx, ly, anchor, fx, fy, front: room for s->n entries each; lim: the space's limits to draw. */
static void write_svg(FILE *f, const struct dse_sweep_view *s, enum plot_x view, const struct dse_sweep_limits *lim,
                      struct pt *p, double *lx, double *ly, int *anchor, double *fx, double *fy, int *front) {
    const double left = 84, right = SVG_W - 30, top = 92, axis_y = SVG_H - 70;
    const int    n_front = view_front(s, view, fx, fy, front, anchor); /* before fx, fy, anchor take pixels */
    /* each limit on the axis of its unit: MB (max_model_mb) and GFLOP (max_flops) */
    const double lim_xv = view == PLOT_X_FLOPS ? lim->gflop : lim->mb;
    const double lim_yv = view == PLOT_X_FLOPS ? lim->mb : lim->gflop;
    const char  *x_unit = view == PLOT_X_FLOPS ? "GFLOP" : "MB", *y_unit = view == PLOT_X_FLOPS ? "MB" : "GFLOP";
    int          band = 0;
    for (int i = 0; i < s->n; i++) band |= s->trained && isnan(s->c[i].rec.top1);
    const double bottom = band ? axis_y - 54 : axis_y; /* of the main area */
    double       xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
    for (int i = 0; i < s->n; i++) {
        const struct dse_cand *c = s->by_size[i];
        double x = view_x(s, view, c);
        xlo = fmin(xlo, x), xhi = fmax(xhi, x);
        if (!s->trained || !isnan(c->rec.top1)) {
            double y = view_y(s, view, c), e = bar(s, c);
            ylo = fmin(ylo, y - e), yhi = fmax(yhi, y + e);
        }
    }
    /* a limit near the data is drawn (the axis stretched to it); one far beyond is not */
    const int lim_x = lim_xv > 0 && lim_xv <= xhi + (xhi - xlo) + 0.5 * xhi;
    const int lim_y = !s->trained && lim_yv > 0 && lim_yv <= yhi + (yhi - ylo) + 0.5 * yhi;
    if (lim_x) xlo = fmin(xlo, lim_xv), xhi = fmax(xhi, lim_xv);
    if (lim_y) ylo = fmin(ylo, lim_yv), yhi = fmax(yhi, lim_yv);
    struct axis ax, ay;
    axis_fit(&ax, xlo, xhi, left, right);
    axis_fit(&ay, ylo, yhi, bottom, top);
    int small = s->n > 40;
    double fs = small ? 9.0 : 11.0;

    plot_points(s, view, &ax, &ay, axis_y, front, n_front, p);
    /* the frontier line, in x order (view_front's order) */
    int nf = 0;
    for (int k = 0; k < n_front; k++)
        for (int i = 0; i < s->n; i++)
            if (p[i].c == &s->c[front[k]]) fx[nf] = p[i].px, fy[nf++] = p[i].py;
    struct box frame = { .x0 = left + 2, .y0 = top + 2, .x1 = right - 2, .y1 = axis_y - 2 };
    struct box *bars = malloc(sizeof *bars * (size_t)(s->n ? s->n : 1)); /* error bars, as drawn below */
    int nb = 0;
    for (int i = 0; bars && i < s->n; i++) {
        double e = p[i].band ? 0 : bar(s, p[i].c);
        if (!(e > 0)) continue;
        double y0 = axis_px(&ay, view_y(s, view, p[i].c) - e), y1 = axis_px(&ay, view_y(s, view, p[i].c) + e);
        bars[nb++] = (struct box){ .x0 = p[i].px - 5, .y0 = fmin(y0, y1) - 1,
                                   .x1 = p[i].px + 5, .y1 = fmax(y0, y1) + 1 };
    }
    place_labels(p, s->n, fs, frame, bars, nb, fx, fy, nf, lx, ly, anchor);
    free(bars);

    const char *ylabel = s->trained ? "top-1 accuracy (%)" : view == PLOT_X_FLOPS ? XLABEL_SIZE : "forward GFLOP per image";
    plot_heading(f, s, view, n_front);
    int plain = 0; /* ordinary points: not pruned, not on the frontier */
    for (int i = 0; i < s->n; i++) /* drawn in the plain style: not pruned, stopped, untrained or on the frontier */
        plain |= !p[i].front && p[i].c->rec.status != DSE_REC_PRUNED && p[i].c->rec.status != DSE_REC_STOPPED && !p[i].band;
    int estimated = 0;
    for (int i = 0; i < s->n; i++) estimated |= view_estimated(s, view, &s->c[i]);
    write_legend(f, s, left, 72, plain, nf > 0, band, lim_x || lim_y, estimated);

    svg_grid(f, &ax, &ay, left, right, top, axis_y);
    if (band) {
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#bbb\" "
                   "stroke-dasharray=\"4 3\"/>\n", left, bottom + 6, right, bottom + 6);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"#666\" text-anchor=\"end\">"
                   "no top-1</text>\n", left - 8, axis_y - 20);
    }
    svg_frame(f, left, right, top, axis_y, bottom,
              view == PLOT_X_FLOPS ? XLABEL_FLOPS : s->compressed ? XLABEL_COMPRESSED : XLABEL_SIZE, ylabel);

    /* the limits, the frontier, then the points, the frontier on top, then the labels */
    const char *dash = "stroke=\"#8c564b\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"";
    if (lim_x) {
        double x = axis_px(&ax, lim_xv);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" %s/>\n", x, top, x, axis_y, dash);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"#8c564b\" text-anchor=\"end\">limit "
                   "%g %s</text>\n", x - 4, top + 14, lim_xv, x_unit);
    }
    if (lim_y) {
        double y = axis_px(&ay, lim_yv);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" %s/>\n", left, y, right, y, dash);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"#8c564b\" text-anchor=\"end\">limit "
                   "%g %s</text>\n", right - 4, y - 4, lim_yv, y_unit);
    }
    svg_step(f, fx, fy, nf, "#d62728");
    plot_marks(f, s, view, &ay, p);
    static const char *const anchors[] = { "start", "middle", "end" };
    fprintf(f, "<g font-size=\"%.0f\" fill=\"#333\">\n", fs);
    for (int i = 0; i < s->n; i++) {
        if (anchor[i] < 0) continue;
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\"%s>", lx[i], ly[i],
                anchors[anchor[i]], p[i].front ? " font-weight=\"bold\"" : "");
        svg_text(f, p[i].use_alt ? p[i].alt : p[i].label);
        fputs("</text>\n", f);
    }
    fputs("</g>\n</svg>\n", f);
}

/* What an SVG writer needs: the sweep, and scratch room for s->n points. */
struct svg_job {
    const void         *extra; /* what a writer needs besides the sweep, or NULL */
    const struct dse_sweep_view *s;
    struct pt          *p;
    double             *lx, *ly, *fx, *fy;
    int                *anchor, *front;
};

typedef void (*svg_fn)(FILE *f, const struct svg_job *j);

/* What the plot writers need besides the sweep: the view and the space's limits. */
struct plot_job {
    enum plot_x             view;
    struct dse_sweep_limits lim;
};

static void plot_svg(FILE *f, const struct svg_job *j) {
    const struct plot_job *o = j->extra;
    write_svg(f, j->s, o->view, &o->lim, j->p, j->lx, j->ly, j->anchor, j->fx, j->fy, j->front);
}

/* The temporary file a plot is being written to: a signal that ends the process meanwhile
 * (Ctrl-C, kill, a hang-up, a closed pipe, a file size limit) removes it first, so that no
 * report leaves one behind (issue #31). Only where the signal's action is the default. */
static const int tmp_sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGXFSZ };
static char *volatile tmp_open;
static struct sigaction tmp_old[DSE_ARRAY_LEN(tmp_sigs)];

static void tmp_drop(int sig) {
    char *t = tmp_open;
    if (t) unlink(t);
    signal(sig, SIG_DFL);
    raise(sig);
}

/* tmp: guard that file (NULL: stop guarding, the old actions back). */
static void tmp_guard(char *tmp) {
    for (int i = 0; i < DSE_ARRAY_LEN(tmp_sigs); i++) {
        if (tmp) {
            struct sigaction sa = { .sa_handler = tmp_drop };
            sigemptyset(&sa.sa_mask);
            if (sigaction(tmp_sigs[i], NULL, &tmp_old[i]) == 0 && tmp_old[i].sa_handler == SIG_DFL)
                sigaction(tmp_sigs[i], &sa, NULL);
        } else if (tmp_open && tmp_old[i].sa_handler == SIG_DFL) {
            sigaction(tmp_sigs[i], &tmp_old[i], NULL);
        }
    }
    tmp_open = tmp;
}

/* Written to a temporary file beside path, then renamed over it. */
static enum dse_status write_svg_file(const struct dse_sweep_view *s, const char *path, svg_fn fn, const char *what,
                                      struct dse_err *err, const void *extra) {
    size_t      n = (size_t)(s->n ? s->n : 1);
    struct svg_job j = { .extra = extra, .s = s, .p = calloc(n, sizeof(struct pt)), .lx = calloc(n, sizeof(double)),
                         .ly = calloc(n, sizeof(double)), .fx = calloc(n, sizeof(double)),
                         .fy = calloc(n, sizeof(double)), .anchor = calloc(n, sizeof(int)),
                         .front = calloc(n, sizeof(int)) };
    size_t      len = strlen(path) + 32;
    char       *tmp = malloc(len);
    enum dse_status st = DSE_OK;
    if (!j.p || !j.lx || !j.ly || !j.anchor || !j.fx || !j.fy || !j.front || !tmp) {
        st = dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
        goto out;
    }
    if ((st = dse_fs_check_target(path, err))) goto out;
    snprintf(tmp, len, "%s.%ld.tmp", path, (long)getpid());
    tmp_guard(tmp);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        st = dse_err_set(err, DSE_ERR_IO, path, 0, "cannot write the %s: %s", what, strerror(errno));
        goto out;
    }
    fn(f, &j);
    int bad_write = ferror(f) != 0;
    bad_write |= fflush(f) != 0;
    bad_write |= fsync(fileno(f)) != 0;
    int e = errno;
    bad_write |= fclose(f) != 0;
    if (!bad_write && rename(tmp, path) != 0) bad_write = 1, e = errno;
    if (bad_write) {
        remove(tmp);
        st = dse_err_set(err, DSE_ERR_IO, path, 0, "cannot write the %s: %s", what, strerror(e));
    }
out:
    tmp_guard(NULL);
    free(j.p), free(j.lx), free(j.ly), free(j.anchor), free(j.fx), free(j.fy), free(j.front), free(tmp);
    return st;
}

static enum dse_status write_plot(const struct dse_sweep_view *s, enum plot_x view, const char *plot_path,
                                  struct dse_err *err) {
    const struct plot_job o = { .view = view, .lim = dse_sweep_limits(s->dir) };
    return write_svg_file(s, plot_path, plot_svg, "plot", err, &o);
}

/* ---- several sweeps' frontiers on one plot -------------------------------------------- */

#define OVERLAY_MAX 8
static const char *const overlay_color[OVERLAY_MAX] = { "#d62728", "#1f77b4", "#2ca02c", "#9467bd",
                                                        "#ff7f0e", "#8c564b", "#e377c2", "#17becf" };

static double plot_y(const struct dse_sweep_view *s, const struct dse_cand *c) {
    return s->trained ? 100.0 * c->rec.top1 : (double)c->rec.flops / 1e9;
}

/* Each sweep in its colour: its ranked candidates as small faded points, its frontier as a
 * step with its points; a legend names each sweep. All sweeps follow one rule (checked). */
static void overlay_svg(FILE *f, const struct dse_sweep_view *const *v, int n) {
    const double left = 84, right = SVG_W - 30, top = 60 + 16.0 * n, axis_y = SVG_H - 70; /* below the legend */
    const int trained = v[0]->trained;
    double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
    for (int k = 0; k < n; k++)
        for (int i = 0; i < v[k]->n; i++) {
            const struct dse_cand *c = &v[k]->c[i];
            if (!dse_sweep_ranked(v[k], c)) continue;
            xlo = fmin(xlo, (double)c->rec.model_bytes / 1e6), xhi = fmax(xhi, (double)c->rec.model_bytes / 1e6);
            ylo = fmin(ylo, plot_y(v[k], c)), yhi = fmax(yhi, plot_y(v[k], c));
        }
    if (!(xlo <= xhi)) xlo = 0, xhi = 1, ylo = 0, yhi = 1; /* nothing ranked yet */
    struct axis ax, ay;
    axis_fit(&ax, xlo, xhi, left, right);
    axis_fit(&ay, ylo, yhi, axis_y, top);
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" height=\"%d\" "
               "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n<title>Frontiers of %d sweeps</title>\n"
               "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"white\"/>\n",
            SVG_W, SVG_H, SVG_W, SVG_H, n, SVG_W, SVG_H);
    fprintf(f, "<text x=\"%.1f\" y=\"26\" font-size=\"17\" font-weight=\"bold\" text-anchor=\"middle\" "
               "fill=\"#222\">Pareto frontiers of %d sweeps: model size vs %s</text>\n", SVG_W / 2.0, n,
            trained ? "top-1 accuracy" : "forward FLOPs");
    fprintf(f, "<text x=\"%.1f\" y=\"46\" font-size=\"12\" text-anchor=\"middle\" fill=\"#555\">frontier "
               "(%s) as a step; each sweep's other candidates as small points</text>\n", SVG_W / 2.0,
            trained ? "max top1, min model size" : "min model size, min FLOPs");
    fputs("<g font-size=\"12\" fill=\"#333\">\n", f);
    for (int k = 0, y = 66; k < n; k++, y += 16) {
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\"/>\n"
                   "<text x=\"%.1f\" y=\"%d\">", left, y - 4, left + 16, y - 4, overlay_color[k], left + 22, y);
        svg_text(f, v[k]->space);
        fputs(" (", f);
        svg_text(f, v[k]->dir);
        fprintf(f, "): %d on the frontier</text>\n", v[k]->n_front);
    }
    fputs("</g>\n", f);
    svg_grid(f, &ax, &ay, left, right, top, axis_y);
    svg_frame(f, left, right, top, axis_y, axis_y, XLABEL_SIZE, trained ? "top-1 accuracy (%)" : "forward GFLOP per image");
    for (int k = 0; k < n; k++) {
        const struct dse_sweep_view *s = v[k];
        double *fx = calloc((size_t)(s->n_front ? s->n_front : 1), sizeof *fx);
        double *fy = calloc((size_t)(s->n_front ? s->n_front : 1), sizeof *fy);
        for (int i = 0; i < s->n; i++)
            if (dse_sweep_ranked(s, &s->c[i]) && !s->c[i].on_front)
                fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\" fill-opacity=\"0.35\"/>\n",
                        axis_px(&ax, (double)s->c[i].rec.model_bytes / 1e6), axis_px(&ay, plot_y(s, &s->c[i])),
                        overlay_color[k]);
        for (int i = 0; fx && fy && i < s->n_front; i++)
            fx[i] = axis_px(&ax, (double)s->front[i]->rec.model_bytes / 1e6), fy[i] = axis_px(&ay, plot_y(s, s->front[i]));
        if (fx && fy) svg_step(f, fx, fy, s->n_front, overlay_color[k]);
        for (int i = 0; fx && fy && i < s->n_front; i++) {
            fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\" stroke=\"white\"><title>", fx[i],
                    fy[i], overlay_color[k]);
            svg_text(f, s->front[i]->rec.id);
            fputs("</title></circle>\n", f);
        }
        free(fx), free(fy);
    }
    fputs("</svg>\n", f);
}

struct overlay_job {
    const struct dse_sweep_view *const *v;
    int n;
};

static void overlay_fn(FILE *f, const struct svg_job *j) {
    const struct overlay_job *o = j->extra;
    overlay_svg(f, o->v, o->n);
}

enum dse_status dse_report_overlay(const char *const *dirs, int n, const char *plot_path, struct dse_err *err) {
    if (n < 1 || n > OVERLAY_MAX)
        return dse_err_set(err, DSE_ERR_CONFIG, NULL, 0, "%d sweeps to overlay; expected 1 to %d", n, OVERLAY_MAX);
    struct dse_sweep_view v[OVERLAY_MAX];
    const struct dse_sweep_view *pv[OVERLAY_MAX];
    enum dse_status st = DSE_OK;
    int read = 0;
    for (; read < n && !st; read++) {
        st = dse_sweep_read(&v[read], dirs[read], err);
        pv[read] = &v[read];
        if (!st && read && v[read].trained != v[0].trained)
            st = dse_err_set(err, DSE_ERR_CONFIG, dirs[read], 0, "this sweep's frontier is %s but %s's is %s; "
                             "overlay sweeps that are all trained or all untrained", v[read].trained ? "trained" :
                             "analytic", dirs[0], v[0].trained ? "trained" : "analytic");
    }
    if (!st) {
        struct overlay_job o = { .v = pv, .n = n };
        st = write_svg_file(&v[0], plot_path, overlay_fn, "plot", err, &o);
    }
    for (int k = 0; k < read; k++) dse_sweep_view_free(&v[k]);
    return st;
}

/* ---- learning curves ----------------------------------------------------------------- */

/* The frontier's labels at the curves' right ends: each the widest that fits the margin
 * (its varied keys, else "#<index>"), the margin as wide as the widest label (at most 40%
 * of the canvas), and the labels moved apart vertically (a line each, inside the plot's
 * height) where curves end close together. In p (label, use_alt, py: the curve's end) and
 * ly (the label's baseline); returns the plot's right edge. */
static double curves_labels(const struct dse_sweep_view *s, struct pt *p, double *ly, int *order, double fs,
                            double top, double axis_y) {
    const double pad = 6 + 8, room = 0.4 * SVG_W - pad, line0 = fs + 3;
    double wmax = 0;
    int n = 0;
    for (int i = 0; i < s->n; i++) {
        const struct dse_cand *c = &s->c[i];
        if (!c->on_front || c->rec.n_epochs == 0) continue;
        int o = 0;
        p[i].label[0] = '\0';
        for (int v = 0; v < s->n_varied && o < (int)sizeof p[i].label; v++) {
            char vb[48];
            o += snprintf(p[i].label + o, sizeof p[i].label - (size_t)o, "%s%s=%s", v ? " " : "", s->varied[v],
                          dse_report_fmt_value(vb, sizeof vb, s->varied[v], dse_json_get(c->metaparams, s->varied[v])));
        }
        dse_report_utf8_trim(p[i].label);
        snprintf(p[i].alt, sizeof p[i].alt, "#%" PRId64, c->rec.index);
        p[i].use_alt = !s->n_varied || dse_report_text_width(p[i].label, fs, 0) > room;
        wmax = fmax(wmax, dse_report_text_width(p[i].use_alt ? p[i].alt : p[i].label, fs, 0));
        order[n++] = i;
    }
    for (int a = 1; a < n; a++) /* by the curve's end, top to bottom (insertion sort: a handful) */
        for (int b = a; b > 0 && p[order[b]].py < p[order[b - 1]].py; b--) {
            int t = order[b];
            order[b] = order[b - 1], order[b - 1] = t;
        }
    const double lo = top + 0.8 * fs, hi = axis_y - 0.25 * fs; /* baselines: the box inside the plot's height */
    const double line = n > 1 ? fmin(line0, (hi - lo) / (n - 1)) : line0; /* more than fit: closer (still inside) */
    for (int k = 0; k < n; k++) { /* down from the top, a line apart, then up from the bottom */
        ly[order[k]] = fmax(p[order[k]].py + 0.3 * fs, k ? ly[order[k - 1]] + line : lo);
    }
    for (int k = n - 1; k >= 0; k--) ly[order[k]] = fmin(ly[order[k]], k + 1 < n ? ly[order[k + 1]] - line : hi);
    return SVG_W - fmax(wmax + pad, 30);
}

/* Test top-1 after each epoch, one line per trained candidate, in epochs: the
 * frontier's candidates in red and labelled, the others in blue; a candidate stopped by
 * successive halving ends at its rung (a hollow end marker), a diverged one with a
 * cross at the epoch it diverged. */
static void curves_svg(FILE *f, const struct svg_job *j) {
    const struct dse_sweep_view *s = j->s;
    const double left = 84, top = 92, axis_y = SVG_H - 70, fs = 11;
    double emax = 1, ylo = INFINITY, yhi = -INFINITY;
    int lines = 0;
    for (int i = 0; i < s->n; i++) {
        const struct dse_rec *r = &s->c[i].rec; /* epoch e + 1 at ep[e] */
        for (int e = 0; e < r->n_epochs; e++)
            if (!isnan(r->ep[e].top1)) ylo = fmin(ylo, 100.0 * r->ep[e].top1), yhi = fmax(yhi, 100.0 * r->ep[e].top1);
        emax = fmax(emax, r->n_epochs);
        lines += r->n_epochs > 0;
    }
    if (!(ylo <= yhi)) ylo = 0, yhi = 100;
    struct axis ax, ay;
    axis_fit(&ay, ylo, yhi, axis_y, top);
    for (int i = 0; i < s->n; i++) { /* where each curve ends, for its label */
        const struct dse_rec *r = &s->c[i].rec;
        j->p[i].py = NAN;
        for (int e = 0; e < r->n_epochs; e++)
            if (!isnan(r->ep[e].top1)) j->p[i].py = axis_px(&ay, 100.0 * r->ep[e].top1);
        if (isnan(j->p[i].py)) j->p[i].py = axis_y;
    }
    const double right = curves_labels(s, j->p, j->ly, j->anchor /* scratch */, fs, top, axis_y);
    axis_fit(&ax, 1, emax, left, right);
    if (emax - 1 < 10) ax.step = 1, ax.decimals = 0; /* whole epochs */
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" height=\"%d\" "
               "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n<title>Learning curves ", SVG_W, SVG_H, SVG_W, SVG_H);
    svg_text(f, s->space);
    fprintf(f, "</title>\n<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"white\"/>\n", SVG_W, SVG_H);
    fprintf(f, "<text x=\"%.1f\" y=\"26\" font-size=\"17\" font-weight=\"bold\" text-anchor=\"middle\" "
               "fill=\"#222\">Sweep ", SVG_W / 2.0);
    svg_text(f, s->space);
    fprintf(f, ": test top-1 after each epoch</text>\n<text x=\"%.1f\" y=\"46\" font-size=\"12\" "
               "text-anchor=\"middle\" fill=\"#555\">%d trained candidate%s; red: on the Pareto frontier (%s); "
               "hollow end: stopped by successive halving; x: diverged</text>\n", SVG_W / 2.0, lines,
            lines == 1 ? "" : "s", dse_report_objective(s));
    fputs("<g font-size=\"11\" fill=\"#444\">\n", f);
    for (double k = ceil(ax.lo / ax.step - 1e-9); k * ax.step <= ax.hi + 1e-9 * ax.step; k++) {
        const double v = k * ax.step, x = axis_px(&ax, v);
        if (v < 1 - 1e-9) continue;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e6e6e6\"/>\n", x, top, x, axis_y);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.*f</text>\n", x, axis_y + 18, ax.decimals, v);
    }
    for (double k = ceil(ay.lo / ay.step - 1e-9); k * ay.step <= ay.hi + 1e-9 * ay.step; k++) {
        const double v = k * ay.step, y = axis_px(&ay, v);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e6e6e6\"/>\n", left, y, right, y);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.*f</text>\n", left - 8, y + 4, ay.decimals, v);
    }
    fputs("</g>\n", f);
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#444\"/>\n",
            left, top, right - left, axis_y - top);
    fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"13\" text-anchor=\"middle\" fill=\"#222\">epoch</text>\n",
            (left + right) / 2, SVG_H - 28);
    fprintf(f, "<text transform=\"translate(22 %.1f) rotate(-90)\" font-size=\"13\" text-anchor=\"middle\" "
               "fill=\"#222\">test top-1 accuracy (%%)</text>\n", (top + axis_y) / 2);
    /* the others first, the frontier on top */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < s->n; i++) {
            const struct dse_cand *c = &s->c[i];
            const struct dse_rec *r = &c->rec;
            if (r->n_epochs == 0 || c->on_front != pass) continue;
            const char *color = pass ? "#d62728" : "#4c78a8";
            fprintf(f, "<g><title>%s", c->rec.id);
            for (int v = 0; v < s->n_varied; v++) {
                char vb[48];
                fprintf(f, " %s=", s->varied[v]);
                svg_text(f, dse_report_fmt_value(vb, sizeof vb, s->varied[v], dse_json_get(c->metaparams, s->varied[v])));
            }
            fprintf(f, "</title>\n<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%s\" stroke-opacity=\"%s\" "
                       "points=\"", color, pass ? "2.2" : "1.4", pass ? "1" : "0.7");
            double lx = 0, ly = 0;
            int any = 0;
            for (int e = 0; e < r->n_epochs; e++) {
                if (isnan(r->ep[e].top1)) continue;
                lx = axis_px(&ax, e + 1.0);
                ly = axis_px(&ay, 100.0 * r->ep[e].top1);
                fprintf(f, "%s%.1f,%.1f", any++ ? " " : "", lx, ly);
            }
            fputs("\"/>\n", f);
            if (any && c->rec.status == DSE_REC_STOPPED)
                fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"white\" stroke=\"%s\" stroke-width=\"1.5\"/>\n",
                        lx, ly, color);
            else if (any)
                fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n", lx, ly, color);
            if (c->rec.status == DSE_REC_DIVERGED && c->rec.diverged_epoch > 0) {
                const double x = axis_px(&ax, (double)c->rec.diverged_epoch), y = axis_y - 10;
                fprintf(f, "<path d=\"M%.1f %.1fl8 8m0 -8l-8 8\" stroke=\"#333\" stroke-width=\"1.5\"/>\n", x - 4, y - 4);
            }
            if (pass && any) { /* label the frontier's curves at their right end (curves_labels) */
                const double ty = j->ly[i];
                if (fabs(ty - 0.3 * fs - ly) > 2) /* moved to make room: a leader from the curve's end */
                    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                               "stroke-width=\"0.8\"/>\n", lx + 4, ly, right + 5, ty - 0.3 * fs, color);
                fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%.0f\" fill=\"%s\">", right + 6, ty, fs, color);
                svg_text(f, j->p[i].use_alt ? j->p[i].alt : j->p[i].label);
                fputs("</text>\n", f);
            }
            fputs("</g>\n", f);
        }
    fputs("</svg>\n", f);
}

enum dse_status dse_report_curves(const char *dir, const char *svg_path, struct dse_err *err) {
    struct dse_sweep_view    s;
    enum dse_status st = dse_sweep_read(&s, dir, err);
    if (!st) st = write_svg_file(&s, svg_path, curves_svg, "learning curves", err, NULL);
    dse_sweep_view_free(&s);
    return st;
}

enum dse_status dse_report_plot_flops(const char *dir, const char *svg_path, struct dse_err *err) {
    struct dse_sweep_view s;
    enum dse_status       st = dse_sweep_read(&s, dir, err);
    if (!st) st = write_plot(&s, PLOT_X_FLOPS, svg_path, err);
    dse_sweep_view_free(&s);
    return st;
}

enum dse_status dse_report_plot_size(const struct dse_sweep_view *s, const char *plot_path, struct dse_err *err) {
    return write_plot(s, PLOT_X_SIZE, plot_path, err);
}
