/* test_report_plot.c: test_report's cases on the SVG plots (dse/report_plot.c): the frontier
 * plot (sizes, FLOPs, a killed write), the training curves, the labels' layout, a running
 * sweep, the overlay, and the epoch record behind the curves. */
#include "tests/report_util.h"

/* A plot whose writing ends the process (issue #31: `report --plot` left its temporary file):
 * a file size limit stops it mid-write (SIGXFSZ, as a Ctrl-C or a kill would), and nothing
 * is left beside the plot. */
void test_report_plot_killed(void) {
    char tmpl[] = "/tmp/dse_test_report.XXXXXX";
    char *dir = mkdtemp(tmpl);
    CHECK(dir != NULL);
    if (!dir) return;
    char plot[256];
    snprintf(plot, sizeof plot, "%s/small.svg", dir);
    fflush(NULL);
    pid_t p = fork();
    if (p == 0) {
        const struct rlimit lim = { .rlim_cur = 1000, .rlim_max = 1000 }; /* the plot is about 6 KB */
        FILE *null = fopen("/dev/null", "w");
        struct dse_err err = { 0 };
        if (!null || setrlimit(RLIMIT_FSIZE, &lim)) _exit(3);
        _exit(dse_report_sweep(null, SMALL, DSE_FORMAT_MD, plot, NULL, &err) == DSE_OK ? 0 : 4);
    }
    int status = 0;
    CHECK(p > 0 && waitpid(p, &status, 0) == p);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGXFSZ); /* stopped mid-write, as meant */
    int left = 0;
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            printf("  left in %s: %s\n", dir, e->d_name);
            left++;
        }
    if (d) closedir(d);
    CHECK_INT_EQ(left, 0);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

void test_report_plot(void) {
    char tmpl[] = "/tmp/dse_test_report.XXXXXX";
    char *dir = mkdtemp(tmpl);
    CHECK(dir != NULL);
    if (!dir) return;
    char plot[256], sw[256];
    enum dse_status st;
    struct dse_err  err = { 0 };

    snprintf(plot, sizeof plot, "%s/small.svg", dir);
    free(run_report(SMALL, DSE_FORMAT_MD, plot, &st, &err));
    CHECK_OK(st);
    check_svg(plot, 6, "small_grid");
    char *s = slurp(plot);
    if (s) {
        CHECK(strstr(s, "top-1 accuracy (%)") != NULL);
        CHECK(strstr(s, "model size (MB = 10^6 bytes") != NULL); /* the unit of max_model_mb */
        CHECK(!strstr(s, "space limit"));                          /* no space.cfg: no limits */
        CHECK(strstr(s, ">sr=0.25 pct3x3=0.75</text>") != NULL); /* labels name the values */
        CHECK_INT_EQ(count_of(s, "fill=\"none\" stroke=\"#999\""), 2 + 1); /* pruned + legend */
        CHECK_INT_EQ(count_of(s, "<circle cx=\"") - count_of(s, "r=\"6\" fill=\"#d62728\""), 4);
        free(s);
    }
    /* atomic: only the plot is left in the directory */
    DIR *dd = opendir(dir);
    int  files = 0;
    for (struct dirent *e; dd && (e = readdir(dd));) files += e->d_name[0] != '.';
    if (dd) closedir(dd);
    CHECK_INT_EQ(files, 1);

    /* analytic mode (FLOPs), a frontier of several points, pruned ones left out */
    snprintf(sw, sizeof sw, "%s/analytic", dir);
    mkdir(sw, 0777);
    put_sweep(sw, "ana", 5, "\"sr\"");
    put_candidate(sw, "ca", 0, 0.125, 1000000, 3000000000, "pending", -1);
    put_candidate(sw, "cb", 1, 0.25, 1500000, 2000000000, "pending", -1);
    put_candidate(sw, "cc", 2, 0.5, 2000000, 2500000000, "pending", -1);
    put_candidate(sw, "cd", 3, 0.75, 2500000, 1000000000, "running", -1);
    put_candidate(sw, "ce", 4, 1.0, 500000, 500000000, "pruned", -1);
    snprintf(plot, sizeof plot, "%s/ana.svg", dir);
    s = run_report(sw, DSE_FORMAT_JSON, plot, &st, &err);
    CHECK_OK(st);
    CHECK(strstr(s, "\"frontier\": [\"ca\", \"cb\", \"cd\"]") != NULL);
    CHECK(strstr(s, "\"frontier_objective\": \"min model size, min FLOPs\"") != NULL);
    free(s);
    s = run_report(sw, DSE_FORMAT_CSV, NULL, &st, &err); /* rows by model size, not index */
    CHECK(s && strstr(s, "\nce,4,") && strstr(s, "\nca,0,") && strstr(s, "\ncd,3,"));
    CHECK(s && strstr(s, "\nce,4,") < strstr(s, "\nca,0,") && strstr(s, "\nca,0,") < strstr(s, "\ncd,3,"));
    free(s);
    check_svg(plot, 5, "ana");
    s = slurp(plot);
    CHECK(s && strstr(s, "forward GFLOP per image") != NULL);
    CHECK(s && count_of(s, "r=\"6\" fill=\"#d62728\"") == 3);
    /* the frontier as a step: 3 points and the 2 corners between them */
    const char *pl = s ? strstr(s, "<polyline fill=\"none\" stroke=\"#d62728\"") : NULL;
    CHECK(pl != NULL);
    if (pl) {
        const char *pts = strstr(pl, "points=\""), *end = pts ? strchr(pts + 8, '"') : NULL;
        int n = 1;
        for (const char *q = pts + 8; pts && end && q < end; q++) n += *q == ' ';
        CHECK_INT_EQ(n, 5);
    }
    free(s);

    /* the space's limits, from DIR/space.cfg: max_model_mb (MB axis) and max_flops (GFLOP axis) */
    write_file(sw, "space.cfg", "name = \"ana\";\nmetaparams = { sr = [0.125, 0.25, 0.5, 0.75, 1.0]; };\n"
                                "constraints = { max_model_mb = 9.5; max_flops = 2800000000L; };\n");
    free(run_report(sw, DSE_FORMAT_CSV, plot, &st, &err));
    CHECK_OK(st);
    s = slurp(plot);
    CHECK(s && strstr(s, ">limit 9.5 MB</text>") != NULL);
    CHECK(s && strstr(s, ">limit 2.8 GFLOP</text>") != NULL);
    CHECK(s && strstr(s, ">space limit</text>") != NULL);
    CHECK(s && strstr(s, ">candidate</text>") != NULL); /* cc is off the frontier */
    free(s);

    /* one candidate, and all-equal values: no division by zero */
    snprintf(sw, sizeof sw, "%s/one", dir);
    mkdir(sw, 0777);
    put_sweep(sw, "one", 1, "");
    put_candidate(sw, "c1", 0, 0.5, 1000000, 1000000000, "done", 0.5);
    snprintf(plot, sizeof plot, "%s/one.svg", dir);
    free(run_report(sw, DSE_FORMAT_CSV, plot, &st, &err));
    CHECK_OK(st);
    check_svg(plot, 1, "one");
    s = slurp(plot);
    CHECK(s && !strstr(s, ">candidate</text>") && strstr(s, ">Pareto frontier</text>")); /* only kinds drawn */
    free(s);
    snprintf(sw, sizeof sw, "%s/equal", dir);
    mkdir(sw, 0777);
    put_sweep(sw, "equal", 3, "\"sr\"");
    put_candidate(sw, "c1", 0, 0.5, 0, 0, "pending", -1);
    put_candidate(sw, "c2", 1, 0.5, 0, 0, "pending", -1);
    put_candidate(sw, "c3", 2, 0.5, 0, 0, "pending", -1);
    snprintf(plot, sizeof plot, "%s/equal.svg", dir);
    s = run_report(sw, DSE_FORMAT_JSON, plot, &st, &err);
    CHECK_OK(st);
    CHECK(strstr(s, "\"frontier\": [\"c1\", \"c2\", \"c3\"]") != NULL);
    free(s);
    check_svg(plot, 3, "equal");

    /* the examples of docs/examples render from the committed fixtures */
    snprintf(plot, sizeof plot, "%s/sr.svg", dir);
    free(run_report("tests/sweeps/squeeze_ratio_trained", DSE_FORMAT_MD, plot, &st, &err));
    CHECK_OK(st);
    check_svg(plot, 8, "squeeze_ratio");

    /* an unwritable plot path is an I/O error naming it, and leaves nothing behind */
    free(run_report(SMALL, DSE_FORMAT_MD, "/nonexistent-dir/p.svg", &st, &err));
    CHECK_INT_EQ(st, DSE_ERR_IO);
    CHECK_STR_EQ(err.file, "/nonexistent-dir/p.svg");
    CHECK_STR_EQ(err.msg, "cannot write the plot: No such file or directory");
    /* a failed rename (the path is a directory) leaves no temporary file behind */
    snprintf(plot, sizeof plot, "%s/adir", dir);
    mkdir(plot, 0777);
    snprintf(sw, sizeof sw, "%s/plots", dir);
    mkdir(sw, 0777);
    snprintf(plot, sizeof plot, "%s/plots/p.svg", dir);
    mkdir(plot, 0777);
    free(run_report(SMALL, DSE_FORMAT_MD, plot, &st, &err));
    CHECK_INT_EQ(st, DSE_ERR_IO);
    CHECK_STR_EQ(err.msg, "cannot write the plot: Is a directory");
    dd = opendir(sw);
    files = 0;
    for (struct dirent *e; dd && (e = readdir(dd));) files += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (dd) closedir(dd);
    CHECK_INT_EQ(files, 1);
    /* a FIFO or a symbolic link at the plot's path is refused and left as it was, with no
     * temporary file beside it (issue #31: the rename put a file in its place) */
    char fifo[300], link[300];
    struct stat sb;
    snprintf(fifo, sizeof fifo, "%s/plots/fifo.svg", dir);
    snprintf(link, sizeof link, "%s/plots/link.svg", dir);
    CHECK(mkfifo(fifo, 0644) == 0 && symlink("elsewhere.svg", link) == 0);
    free(run_report(SMALL, DSE_FORMAT_MD, fifo, &st, &err));
    CHECK_INT_EQ(st, DSE_ERR_IO);
    CHECK_STR_EQ(err.file, fifo);
    CHECK(!strncmp(err.msg, "is a FIFO; expected a regular file or a new name", 48));
    free(run_report(SMALL, DSE_FORMAT_MD, link, &st, &err));
    CHECK_INT_EQ(st, DSE_ERR_IO);
    CHECK(!strncmp(err.msg, "is a symbolic link; expected a regular file or a new name", 57));
    CHECK(lstat(fifo, &sb) == 0 && S_ISFIFO(sb.st_mode));
    CHECK(lstat(link, &sb) == 0 && S_ISLNK(sb.st_mode));
    dd = opendir(sw);
    files = 0;
    for (struct dirent *e; dd && (e = readdir(dd));) files += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (dd) closedir(dd);
    CHECK_INT_EQ(files, 3);
    rm_tree(dir);
}

/* The ids of a plot's frontier points (red, r=6), in document order, space-separated. */
static void front_ids(const char *svg, char *out, size_t size) {
    out[0] = '\0';
    for (const char *p = svg; p && (p = strstr(p, "r=\"6\" fill=\"#d62728\"")); p++) {
        const char *t = strstr(p, "<title>"), *e = t ? strchr(t + 7, ' ') : NULL;
        if (!e) break;
        snprintf(out + strlen(out), size - strlen(out), "%s%.*s", out[0] ? " " : "", (int)(e - t - 7), t + 7);
    }
}

/* dse report --plot-flops: top-1 against forward FLOPs with its own frontier (max top1,
 * min FLOPs), which differs from the size plot's where a small model computes much and a
 * large one little; before training, model size against FLOPs with the analytic frontier. */
void test_report_plot_flops(void) {
    char tmpl[] = "/tmp/dse_test_flops.XXXXXX";
    char *dir = mkdtemp(tmpl);
    CHECK(dir != NULL);
    if (!dir) return;
    char sw[256], size_svg[300], flops_svg[300], ids[400];
    enum dse_status st;
    struct dse_err err = { 0 };
    snprintf(sw, sizeof sw, "%s/trained", dir);
    mkdir(sw, 0777);
    put_sweep(sw, "flopsy", 6, "\"sr\"");
    put_candidate(sw, "ca", 0, 0.125, 1000, 3000000000, "done", 0.7);  /* small model, many FLOPs */
    put_candidate(sw, "cb", 1, 0.25, 3000, 1000000000, "done", 0.7);   /* large model, few FLOPs */
    put_candidate(sw, "cc", 2, 0.5, 2000, 2000000000, "done", 0.6);    /* dominated in both views */
    put_candidate(sw, "cd", 3, 0.75, 500, 4000000000, "done", 0.5);    /* smallest: size frontier only */
    put_candidate(sw, "ce", 4, 1.0, 400, 500000000, "pruned", -1);     /* fewest FLOPs, but pruned */
    put_candidate(sw, "cf", 5, 0.0625, 4000, 600000000, "pending", -1); /* not trained: not ranked */
    snprintf(size_svg, sizeof size_svg, "%s/size.svg", dir);
    snprintf(flops_svg, sizeof flops_svg, "%s/flops.svg", dir);
    free(run_report(sw, DSE_FORMAT_MD, size_svg, &st, &err));
    CHECK_OK(st);
    CHECK_OK(dse_report_plot_flops(sw, flops_svg, &err));
    char *a = slurp(size_svg), *b = slurp(flops_svg);
    CHECK(a && b);
    if (a && b) {
        front_ids(a, ids, sizeof ids);
        CHECK_STR_EQ(ids, "cd ca"); /* max top1, min model size */
        front_ids(b, ids, sizeof ids);
        CHECK_STR_EQ(ids, "cb"); /* max top1, min FLOPs */
        CHECK(strstr(b, ">Sweep flopsy: forward FLOPs vs top-1 accuracy</text>") != NULL);
        CHECK(strstr(b, "frontier (max top1, min FLOPs): 1 point</text>") != NULL);
        CHECK(strstr(b, ">forward GFLOP per image (2 per multiply-add; GMAC = GFLOP / 2)</text>") != NULL);
        CHECK(strstr(b, ">top-1 accuracy (%)</text>") != NULL);
        CHECK(!strstr(b, "model size (MB"));
        CHECK(strstr(a, "frontier (max top1, min model size): 2 points</text>") != NULL);
    }
    free(a), free(b);
    check_svg(flops_svg, 6, "flopsy");

    /* before training: model size against FLOPs; the frontier is the analytic one, and the
     * space's limits move with their units (max_flops on x, max_model_mb on y) */
    snprintf(sw, sizeof sw, "%s/analytic", dir);
    mkdir(sw, 0777);
    put_sweep(sw, "ana", 4, "\"sr\"");
    put_candidate(sw, "ca", 0, 0.125, 1000000, 3000000000, "pending", -1);
    put_candidate(sw, "cb", 1, 0.25, 1500000, 2000000000, "pending", -1);
    put_candidate(sw, "cc", 2, 0.5, 2000000, 2500000000, "pending", -1);
    put_candidate(sw, "cd", 3, 0.75, 2500000, 1000000000, "pending", -1);
    write_file(sw, "space.cfg", "name = \"ana\";\nmetaparams = { sr = [0.125, 0.25, 0.5, 0.75, 1.0]; };\n"
                                "constraints = { max_model_mb = 9.5; max_flops = 2800000000L; };\n");
    CHECK_OK(dse_report_plot_flops(sw, flops_svg, &err));
    b = slurp(flops_svg);
    CHECK(b != NULL);
    if (b) {
        front_ids(b, ids, sizeof ids);
        CHECK_STR_EQ(ids, "ca cb cd"); /* the size view's frontier, as a set */
        CHECK(strstr(b, ">Sweep ana: forward FLOPs vs model size</text>") != NULL);
        CHECK(strstr(b, "frontier (min FLOPs, min model size): 3 points</text>") != NULL);
        CHECK(strstr(b, "rotate(-90)\" font-size=\"13\" text-anchor=\"middle\" fill=\"#222\">model size (MB") != NULL);
        /* the FLOPs limit is a vertical line (its label at the top), the size limit horizontal */
        CHECK(strstr(b, "text-anchor=\"end\">limit 2.8 GFLOP</text>") && strstr(b, "y=\"106.0\" font-size=\"11\" "
              "fill=\"#8c564b\" text-anchor=\"end\">limit 2.8 GFLOP</text>"));
        CHECK(strstr(b, ">limit 9.5 MB</text>") != NULL);
    }
    free(b);
    check_svg(flops_svg, 4, "ana");

    /* the committed fixture, byte for byte: tests/sweeps/golden/small_flops.svg */
    CHECK_OK(dse_report_plot_flops(SMALL, flops_svg, &err));
    b = slurp(flops_svg);
    CHECK(b != NULL);
    if (b) check_golden("small_flops.svg", b);
    free(b);
    /* an unwritable path: the plot's I/O error */
    CHECK_INT_EQ(dse_report_plot_flops(SMALL, "/nonexistent-dir/p.svg", &err), DSE_ERR_IO);
    CHECK_STR_EQ(err.msg, "cannot write the plot: No such file or directory");
    rm_tree(dir);
}

/* A trained candidate with per-epoch results (docs/sweep-dir.md); top1s: one per epoch,
 * negative for null. */
static void put_trained(const char *dir, const char *id, int index, double sr, long params, const char *status,
                        const double *top1s, int epochs, const char *extra) {
    char text[3000], rel[64], pe[1500] = "";
    int o = 0;
    for (int e = 0; e < epochs; e++) {
        char t1[32];
        if (top1s[e] < 0) snprintf(t1, sizeof t1, "null");
        else snprintf(t1, sizeof t1, "%g", top1s[e]);
        o += snprintf(pe + o, sizeof pe - (size_t)o, "%s{\"epoch\": %d, \"train_loss\": 1.0, \"loss\": 1.0, "
                      "\"top1\": %s, \"top5\": null, \"seconds\": 2.5, \"img_per_s\": 100}", e ? ", " : "", e + 1, t1);
    }
    snprintf(text, sizeof text,
             "{\"id\": \"%s\", \"index\": %d,\n \"metaparams\": {\"sr\": %g, \"bypass\": \"none\"},\n"
             " \"params\": %ld, \"model_bytes\": %ld, \"flops\": 1000,\n"
             " \"train_mem_bytes\": null, \"status\": \"%s\", \"pruned_by\": null,\n"
             " \"top1\": %g, \"top5\": null, \"epochs_done\": %d, \"per_epoch\": [%s]%s}\n",
             id, index, sr, params, 4 * params, status, top1s[epochs - 1] < 0 ? 0.1 : top1s[epochs - 1], epochs,
             pe, extra);
    snprintf(rel, sizeof rel, "candidates/%s.json", id);
    write_file(dir, rel, text);
}

/* dse report --curves: one polyline per trained candidate, points per epoch with a
 * top-1 (null epochs skipped), the frontier's in red and labelled, a stopped one ending
 * in a hollow marker, a diverged one crossed; a bad per_epoch entry is an error naming
 * the file and line. */
void test_report_curves(void) {
    char tmpl[] = "/tmp/dse_test_curves.XXXXXX";
    char *dir = mkdtemp(tmpl);
    CHECK(dir != NULL);
    if (!dir) return;
    char sw[256], svg[300];
    struct dse_err err = { 0 };
    snprintf(sw, sizeof sw, "%s/trained", dir);
    mkdir(sw, 0777);
    put_sweep(sw, "curvy", 4, "\"sr\"");
    const double a[3] = { 0.5, 0.6, 0.7 }, b[3] = { 0.4, 0.55, 0.65 }, c[1] = { 0.3 }, d[2] = { 0.2, -1 };
    put_trained(sw, "ca", 0, 0.125, 1000, "done", a, 3, "");               /* small and best: frontier */
    put_trained(sw, "cb", 1, 0.25, 2000, "done", b, 3, "");                /* dominated */
    /* smallest, but stopped: the frontier is over fully trained candidates only */
    put_trained(sw, "cc", 2, 0.5, 500, "stopped", c, 1, ", \"stopped_rung\": 0, \"stopped_epoch\": 1");
    put_trained(sw, "cd", 3, 1.0, 4000, "diverged", d, 2, ", \"diverged_epoch\": 2, \"diverged_iter\": 7");
    snprintf(svg, sizeof svg, "%s/curves.svg", dir);
    CHECK_OK(dse_report_curves(sw, svg, &err));
    char *s = slurp(svg);
    CHECK(s != NULL);
    if (s) {
        CHECK(starts_with(s, "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\""));
        CHECK(well_formed_xml(s));
        CHECK_INT_EQ(count_of(s, "<polyline"), 4);
        CHECK(strstr(s, "points=\"") != NULL);
        CHECK_INT_EQ(count_of(s, "stroke=\"#d62728\" stroke-width=\"2.2\""), 1); /* ca, the frontier */
        CHECK_INT_EQ(count_of(s, "fill=\"white\" stroke="), 1 + 0);               /* cc stopped */
        CHECK_INT_EQ(count_of(s, "l8 8m0 -8l-8 8"), 1);                               /* cd diverged */
        CHECK(strstr(s, ">sr=0.125</text>") && !strstr(s, ">sr=0.5</text>") && !strstr(s, ">sr=0.25</text>"));
        CHECK(strstr(s, "test top-1 after each epoch") != NULL);
        CHECK(!strstr(s, "nan") && !strstr(s, "inf"));
        /* ca's line has 3 points, cd's 1 (its second epoch has no top-1) */
        const char *pa = strstr(s, "<title>ca sr=0.125</title>");
        CHECK(pa != NULL);
        if (pa) {
            const char *pts = strstr(pa, "points=\""), *end = pts ? strchr(pts + 8, '"') : NULL;
            int commas = 0;
            for (const char *q = pts; q && q < end; q++) commas += *q == ',';
            CHECK_INT_EQ(commas, 3);
        }
        free(s);
    }
    /* the size plot: the stopped candidate hollow (its top-1 is from its rung), with a
     * legend entry saying so */
    snprintf(svg, sizeof svg, "%s/plot.svg", dir);
    enum dse_status pst;
    free(run_report(sw, DSE_FORMAT_MD, svg, &pst, &err));
    CHECK_OK(pst);
    s = slurp(svg);
    CHECK(s && count_of(s, "fill=\"white\" stroke=\"#4c78a8\" stroke-width=\"1.8\"") == 2);
    CHECK(s && strstr(s, ">stopped early (top-1 at its rung)</text>") != NULL);
    free(s);
    /* a per_epoch entry without an epoch number */
    put_trained(sw, "cb", 1, 0.25, 2000, "done", b, 3, ", \"per_epoch_note\": 1");
    write_file(sw, "candidates/cb.json", "{\"id\": \"cb\", \"index\": 1, \"metaparams\": {\"sr\": 0.25},\n"
               "\"params\": 1, \"model_bytes\": 4, \"flops\": 1, \"status\": \"done\", \"top1\": 0.5,\n"
               "\"per_epoch\": [{\"top1\": 0.5}]}\n");
    CHECK_INT_EQ(dse_report_curves(sw, svg, &err), DSE_ERR_CONFIG);
    CHECK(strstr(err.msg, "cb.json:3: \"per_epoch\"[0] is not {\"epoch\": k >= 1") != NULL);
    if (!strstr(err.msg, "cb.json:3:")) fprintf(stderr, "  got: %s\n", err.msg);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK_INT_EQ(system(cmd), 0);
}

/* ---- label layout: every text inside the canvas, labels off error bars and each other ---- */

struct text_box {
    double x0, y0, x1, y1;
    char   text[200];
};

/* The value of attribute name in the tag starting at tag (up to its '>'), or NULL. */
static const char *attr(const char *tag, const char *name, char *buf, size_t size) {
    const char *end = strchr(tag, '>');
    char pat[64];
    snprintf(pat, sizeof pat, " %s=\"", name);
    const char *a = strstr(tag, pat);
    if (!a || !end || a > end) return NULL;
    a += strlen(pat);
    size_t n = strcspn(a, "\"");
    if (n >= size) n = size - 1;
    memcpy(buf, a, n);
    buf[n] = '\0';
    return buf;
}

/* The boxes of an SVG's <text> elements, as the writer measures them (dse_report_text_width;
 * from 0.8 em above the baseline to 0.25 em below), font sizes inherited from <g>; rotated
 * ones (axis titles) left out. Returns the count, at most max. */
static int svg_text_boxes(const char *svg, struct text_box *b, int max) {
    double fs_stack[32] = { 16 };
    int    depth = 0, n = 0;
    char   v[200];
    for (const char *p = svg; (p = strchr(p, '<')) != NULL; p++) {
        if (!strncmp(p, "<g", 2) && (p[2] == ' ' || p[2] == '>')) {
            double fs = attr(p, "font-size", v, sizeof v) ? atof(v) : fs_stack[depth];
            if (depth + 1 < 32) fs_stack[++depth] = fs;
        } else if (!strncmp(p, "</g>", 4)) {
            if (depth > 0) depth--;
        } else if (!strncmp(p, "<text", 5) && n < max && !attr(p, "transform", v, sizeof v)) {
            double fs = attr(p, "font-size", v, sizeof v) ? atof(v) : fs_stack[depth];
            double x = attr(p, "x", v, sizeof v) ? atof(v) : 0, y = attr(p, "y", v, sizeof v) ? atof(v) : 0;
            const int bold = attr(p, "font-weight", v, sizeof v) && !strcmp(v, "bold");
            const char *anchor = attr(p, "text-anchor", v, sizeof v) ? v : "start";
            const int mid = !strcmp(anchor, "middle"), end = !strcmp(anchor, "end");
            const char *t = strchr(p, '>') + 1, *close = strstr(t, "</text>");
            int k = 0;
            for (const char *q = t; q < close && k + 1 < (int)sizeof b[n].text; q++) { /* entities: one character */
                if (*q == '&') {
                    b[n].text[k++] = q[1] == 'a' ? '&' : q[1] == 'l' ? '<' : q[1] == 'g' ? '>' : '"';
                    q = strchr(q, ';');
                } else {
                    b[n].text[k++] = *q;
                }
            }
            b[n].text[k] = '\0';
            const double w = dse_report_text_width(b[n].text, fs, bold);
            b[n].x0 = mid ? x - w / 2 : end ? x - w : x, b[n].x1 = b[n].x0 + w;
            b[n].y0 = y - 0.8 * fs, b[n].y1 = y + 0.25 * fs;
            n++;
        }
    }
    return n;
}

/* Every text inside the width x height canvas; every label (a text with '=') clear of
 * every error bar (its stem and caps, 4 px either side) and of every other label. */
static void check_layout(const char *svg, double width, double height) {
    struct text_box *b = malloc(sizeof *b * 400);
    if (!b) return;
    const int n = svg_text_boxes(svg, b, 400);
    CHECK(n > 0);
    for (int i = 0; i < n; i++) {
        const int in = b[i].x0 >= 0 && b[i].x1 <= width && b[i].y0 >= 0 && b[i].y1 <= height;
        CHECK(in);
        if (!in) fprintf(stderr, "  text '%s' [%.1f, %.1f] x [%.1f, %.1f] leaves the canvas\n", b[i].text, b[i].x0,
                         b[i].x1, b[i].y0, b[i].y1);
    }
    for (const char *p = svg; (p = strstr(p, "<path class=\"errbar\" d=\"M")) != NULL; p++) {
        double x, y0, y1;
        if (sscanf(p + strlen("<path class=\"errbar\" d=\"M"), "%lf %lfV%lf", &x, &y0, &y1) != 3) continue;
        for (int i = 0; i < n; i++) {
            if (!strchr(b[i].text, '=')) continue;
            const int hit = b[i].x0 < x + 4 && b[i].x1 > x - 4 && b[i].y0 < fmax(y0, y1) && b[i].y1 > fmin(y0, y1);
            CHECK(!hit);
            if (hit) fprintf(stderr, "  label '%s' crosses the error bar at x %.1f\n", b[i].text, x);
        }
    }
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            if (!strchr(b[i].text, '=') || !strchr(b[j].text, '=')) continue;
            const int hit = b[i].x0 < b[j].x1 && b[j].x0 < b[i].x1 && b[i].y0 < b[j].y1 && b[j].y0 < b[i].y1;
            CHECK(!hit);
            if (hit) fprintf(stderr, "  labels '%s' and '%s' overlap\n", b[i].text, b[j].text);
        }
    free(b);
}

/* Plots and learning curves of sweeps whose labels are long (four varied keys), whose
 * frontier curves end close together, and whose replicates' error bars are tall: every
 * text stays inside the 860 x 600 canvas, no label crosses an error bar or another label. */
void test_report_layout(void) {
    char tmpl[] = "/tmp/dse_test_layout.XXXXXX";
    char *dir = mkdtemp(tmpl);
    CHECK(dir != NULL);
    if (!dir) return;
    char sw[256], svg[300], rel[80], text[3000];
    struct dse_err  err = { 0 };
    enum dse_status st;
    static const char *const bypass[3] = { "none", "simple", "complex" };
    for (int reps = 1; reps <= 3; reps += 2) {
        snprintf(sw, sizeof sw, "%s/sweep%d", dir, reps);
        mkdir(sw, 0777);
        put_sweep(sw, "layout", 6, "\"sr\", \"pct3x3\", \"base_e\", \"bypass\"");
        for (int a = 0; a < 6; a++)
            for (int r = 0; r < reps; r++) {
                char pe[600] = "", id[40];
                int o = 0;
                /* larger and better: all on the frontier, their last top-1 within half a point */
                const double last = 0.70 + 0.001 * a + (reps > 1 ? 0.06 * (r - 1) * (a % 2 ? 1 : -1) : 0);
                for (int e = 0; e < 4; e++)
                    o += snprintf(pe + o, sizeof pe - (size_t)o, "%s{\"epoch\": %d, \"train_loss\": 1.0, \"loss\": 1.0, "
                                  "\"top1\": %g, \"top5\": null, \"seconds\": 2.5, \"img_per_s\": 100}", e ? ", " : "",
                                  e + 1, last - 0.1 * (3 - e) * (1 + 0.1 * a));
                snprintf(id, sizeof id, "c%016x%s", a + 1, r ? (r == 1 ? "r1" : "r2") : "");
                snprintf(text, sizeof text,
                         "{\"id\": \"%s\", \"index\": %d,%s\n \"metaparams\": {\"sr\": %g, \"pct3x3\": %g, \"base_e\": %d, "
                         "\"bypass\": \"%s\"},\n \"params\": %d, \"model_bytes\": %d, \"flops\": 1000,\n"
                         " \"train_mem_bytes\": null, \"status\": \"done\", \"pruned_by\": null,\n"
                         " \"top1\": %g, \"top5\": null, \"epochs_done\": 4, \"per_epoch\": [%s]}\n",
                         id, a, reps > 1 ? (const char *[]){ " \"replicate\": 0,", " \"replicate\": 1,",
                                                             " \"replicate\": 2," }[r] : "",
                         0.125 * (a + 1), 0.0625 * (a + 3), 128 * (a + 1), bypass[a % 3], 1000000 + 250000 * a,
                         4000000 + 1000000 * a, last, pe);
                snprintf(rel, sizeof rel, "candidates/%s.json", id);
                write_file(sw, rel, text);
            }
        snprintf(svg, sizeof svg, "%s/curves%d.svg", dir, reps);
        CHECK_OK(dse_report_curves(sw, svg, &err));
        char *s = slurp(svg);
        CHECK(s && count_of(s, "<polyline") == 6 * reps - (reps > 1 ? 6 * (reps - 1) : 0));
        if (s) check_layout(s, 860, 600);
        free(s);
        snprintf(svg, sizeof svg, "%s/plot%d.svg", dir, reps);
        free(run_report(sw, DSE_FORMAT_MD, svg, &st, &err));
        CHECK_OK(st);
        s = slurp(svg);
        CHECK(s && count_of(s, "class=\"errbar\"") == (reps > 1 ? 6 : 0));
        if (s) check_layout(s, 860, 600);
        free(s);
    }
    rm_tree(dir);
}

/* A pending candidate with a live lease shows as running (candidate files never say
 * running); once the lease is released it is pending again. */
void test_report_running(void) {
    char tmpl[] = "/tmp/dse_test_running.XXXXXX";
    char *dir = mkdtemp(tmpl);
    CHECK(dir != NULL);
    if (!dir) return;
    struct dse_err  err = { 0 };
    enum dse_status st;
    put_sweep(dir, "live", 2, "\"sr\"");
    put_candidate(dir, "ca", 0, 0.125, 1000, 1000, "pending", -1);
    put_candidate(dir, "cb", 1, 0.25, 2000, 2000, "pending", -1);
    struct dse_lease_me me;
    struct dse_lease    l;
    int                 won = 0;
    dse_lease_me_init(&me);
    CHECK_OK(dse_lease_claim(dir, "ca", 0, &me, 60.0, NULL, &l, &won, &err));
    CHECK_INT_EQ(won, 1);
    char *s = run_report(dir, DSE_FORMAT_CSV, NULL, &st, &err);
    CHECK_OK(st);
    CHECK(s && strstr(s, "\nca,0,") && strstr(strstr(s, "\nca,0,"), ",running,") != NULL);
    CHECK(s && strstr(s, "\ncb,1,") && strstr(strstr(s, "\ncb,1,"), ",pending,") != NULL);
    free(s);
    CHECK_OK(dse_lease_release(dir, &l, &err));
    s = run_report(dir, DSE_FORMAT_CSV, NULL, &st, &err);
    CHECK(s && strstr(s, "\nca,0,") && strstr(strstr(s, "\nca,0,"), ",pending,") != NULL);
    free(s);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK_INT_EQ(system(cmd), 0);
}

/* dse report A B --plot: both frontiers on one plot, each in its colour, named in the
 * legend; a trained and an untrained sweep do not mix. */
void test_report_overlay(void) {
    char tmpl[] = "/tmp/dse_test_overlay.XXXXXX";
    char *dir = mkdtemp(tmpl);
    CHECK(dir != NULL);
    if (!dir) return;
    char plot[256];
    struct dse_err err = { 0 };
    snprintf(plot, sizeof plot, "%s/both.svg", dir);
    const char *dirs[] = { SMALL, "tests/sweeps/squeeze_ratio_trained" };
    CHECK_OK(dse_report_overlay(dirs, 2, plot, &err));
    char *s = slurp(plot);
    CHECK(s && well_formed_xml(s));
    CHECK(s && strstr(s, ">Pareto frontiers of 2 sweeps: model size vs top-1 accuracy</text>"));
    CHECK(s && strstr(s, ">small_grid (tests/sweeps/small): 2 on the frontier</text>"));
    CHECK(s && strstr(s, ">squeeze_ratio (tests/sweeps/squeeze_ratio_trained): 6 on the frontier</text>"));
    CHECK(s && count_of(s, "<polyline fill=\"none\" stroke=\"#d62728\"") == 1);
    CHECK(s && count_of(s, "<polyline fill=\"none\" stroke=\"#1f77b4\"") == 1);
    CHECK(s && count_of(s, "r=\"5\" fill=\"#1f77b4\"") == 6); /* sweep 2's frontier points */
    free(s);
    const char *mixed[] = { SMALL, "tests/sweeps/squeeze_ratio" };
    CHECK_INT_EQ(dse_report_overlay(mixed, 2, plot, &err), DSE_ERR_CONFIG);
    CHECK(strstr(err.msg, "this sweep's frontier is analytic but tests/sweeps/small's is trained") != NULL);
    CHECK_INT_EQ(dse_report_overlay(mixed, 9, plot, &err), DSE_ERR_CONFIG);
    rm_tree(dir);
}

/* One epoch's results (engine/epoch.def) written as a record's per_epoch entry and read
 * back: the same bits; unknown values as null, an unknown count left out. */
void test_epoch_record(void) {
    const struct dse_epoch_result in = { .train_loss = 2.4603744f, .test_loss = 0.1f, .top1 = 0.7487f, .top5 = 1.0f,
                                      .seconds = 12.3456, .img_per_s = 563.75, .unpredicted = 2 };
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return;
    dse_rec_epoch_write(f, 3, &in);
    fclose(f);
    CHECK_STR_EQ(text, "{\"epoch\": 3, \"train_loss\": 2.4603744, \"loss\": 0.1, \"top1\": 0.7487, \"top5\": 1, "
                       "\"seconds\": 12.346, \"img_per_s\": 563.8, \"unpredicted\": 2}");
    struct dse_err err = { 0 };
    struct dse_json_doc *d = parse(text, &err);
    CHECK(d != NULL);
    if (d) {
        struct dse_epoch_result out = dse_rec_epoch_read(dse_json_root(d));
        CHECK(out.train_loss == in.train_loss && out.test_loss == in.test_loss && out.top1 == in.top1 &&
              out.top5 == in.top5);
        CHECK_NEAR(out.seconds, 12.346, 0);
        CHECK_INT_EQ(out.unpredicted, 2);
        dse_json_free(d);
    }
    free(text);
    text = NULL;
    f = open_memstream(&text, &len);
    if (!f) return;
    const struct dse_epoch_result unknown = dse_rec_epoch_unknown();
    dse_rec_epoch_write(f, 1, &unknown);
    fclose(f);
    CHECK_STR_EQ(text, "{\"epoch\": 1, \"train_loss\": null, \"loss\": null, \"top1\": null, \"top5\": null, "
                       "\"seconds\": 0.000, \"img_per_s\": 0.0}");
    free(text);
}
