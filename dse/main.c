/* main.c: the dse command. Parses arguments, calls the library modules, prints their
 * errors as "file:line: message" and picks the exit code: 0 success, 2 bad input
 * (usage, network or space file, shapes), 1 anything else. docs/cli.md describes every
 * command. Here: the dispatch and the commands analyze, diff, count, generate, data,
 * export, import; sweep/status/report in dse/cmd_sweep.c, train/bench/profile/eval/predict
 * in dse/cmd_train.c, what they share in dse/cmd_common.c (dse/cmd.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fs.h"
#include "data/synth.h"
#include "dse/cmd.h"
#include "dse/dataprep.h"
#include "dse/exportcmd.h"
#include "sweep/sweep.h"

static const char usage_main[] =
    "usage: dse <command> [options]\n"
    "\n"
    "Design-space exploration of SqueezeNet-family CNNs (Iandola's thesis).\n"
    "\n"
    "commands:\n"
    "  analyze NET          closed-form params, FLOPs, activations, memory of a network\n"
    "  diff BASE VARIANT    per-layer ratios between two networks and the reach of the change\n"
    "  count SPACE          how many candidates a design space holds\n"
    "  generate SPACE       write candidate networks as .cfg or Caffe prototxt\n"
    "  sweep SPACE          cost and train every candidate of a space, with many workers\n"
    "  status DIR           progress of a training sweep: done, running, pending, ETA\n"
    "  report DIR           candidates and Pareto frontier of a sweep; SVG plot\n"
    "  train NET            train a network on Fashion-MNIST, MNIST, CIFAR or an image folder, CPU or GPU\n"
    "  bench NET            training or inference images per second\n"
    "  profile NET          per-layer forward and backward time and GFLOP/s\n"
    "  eval NET             a trained checkpoint's loss, top-1, top-5 and per-class accuracy\n"
    "  compress NET         a trained checkpoint pruned, weight-shared and coded into a .dsez\n"
    "  predict NET IMAGE... the top classes of JPEG/PNG images by a trained checkpoint\n"
    "  export NET|SWEEPDIR  a trained network as ONNX, or Caffe prototxt + caffemodel\n"
    "  import MODEL [NET]   a .caffemodel's or an ONNX model's weights into a dse checkpoint\n"
    "  data SUBCOMMAND      image folders and packs: pack, info, bench, synth ('dse data --help')\n"
    "  help [COMMAND]       this text, or a command's options\n"
    "\n"
    "NET is a dse network file (.cfg, docs/network-format.md) or Caffe prototxt; SPACE is a\n"
    "design-space file (docs/space-format.md).\n"
    "Run 'dse COMMAND --help' for a command's options. Exit status: 0 ok, 2 bad input, 1 other errors.\n";

/* --skip-unknown: how many nodes of path were kept as zero-cost `unknown` layers. */
static void say_skipped(const char *path, const struct dse_net *net) {
    int n = 0;
    for (int i = 0; i < net->n_layers; i++) n += net->layers[i].type == DSE_LAYER_UNKNOWN;
    if (n) fprintf(stderr, "dse: %s: %d node%s of ops dse does not read costed as zero (--skip-unknown)\n", path, n,
                   n == 1 ? "" : "s");
}

static int cmd_analyze(const struct dse_opt_cmd *c, const struct dse_opt_args *a) {
    struct dse_err err = { 0 };
    struct dse_net net;
    struct dse_input_shape in;
    const long long batch = OPT_NUM(BATCH);
    const enum dse_format fmt = opt_format(OPT(FORMAT), DSE_FORMAT_TABLE);
    int rc;
    if (OPT(COMM_WORKERS) || OPT(BANDWIDTH) || OPT(LATENCY) || OPT(IMG_PER_S) || FLAG(MEASURE))
        return analyze_comm(c, a);
    if (FLAG(COMPRESSED)) /* a .dsez: where its bytes go (issue #35) */
        return dse_report_compressed(stdout, a->pos[0], fmt, &err) ? fail(&err) : 0;
    if ((rc = opt_fit(c->name, a, &in)) >= 0) return rc;
    in.skip_unknown = FLAG(SKIP_UNKNOWN);
    if (dse_netfile_load(a->pos[0], &in, &net, &err)) return fail(&err);
    say_skipped(a->pos[0], &net);
    rc = dse_report_analyze(stdout, a->pos[0], &net, batch, dse_report_rows(a->pos[0], FLAG(EXPAND)), fmt, &err)
             ? fail(&err) : 0;
    dse_net_deinit(&net);
    return rc;
}

static int cmd_diff(const struct dse_opt_cmd *c, const struct dse_opt_args *a) {
    struct dse_err err = { 0 };
    struct dse_net base, var;
    const long long batch = OPT_NUM(BATCH);
    const enum dse_format fmt = opt_format(OPT(FORMAT), DSE_FORMAT_TABLE);
    int rc;
    struct dse_input_shape in;
    if ((rc = opt_fit(c->name, a, &in)) >= 0) return rc;
    in.skip_unknown = FLAG(SKIP_UNKNOWN);
    if (dse_netfile_load(a->pos[0], &in, &base, &err)) return fail(&err);
    if (dse_netfile_load(a->pos[1], &in, &var, &err)) {
        dse_net_deinit(&base);
        return fail(&err);
    }
    say_skipped(a->pos[0], &base);
    say_skipped(a->pos[1], &var);
    rc = dse_report_diff(stdout, a->pos[0], &base, a->pos[1], &var, batch, FLAG(EXPAND), fmt, &err)
             ? fail(&err) : 0;
    dse_net_deinit(&base);
    dse_net_deinit(&var);
    return rc;
}

static int cmd_count(const struct dse_opt_cmd *c, const struct dse_opt_args *a) {
    struct dse_space s;
    struct dse_err err = { 0 };
    (void)c;
    if (dse_space_load(a->pos[0], &s, &err)) return fail(&err);
    printf("%s: ", s.name);
    int any = 0;
    for (int k = 0; k < DSE_AX_COUNT; k++)
        if (s.axes[k].n > 1) {
            printf("%s%s %d", any ? " x " : "", dse_axis_name((enum dse_axis_key)k), s.axes[k].n);
            any = 1;
        }
    if (s.count_overflow) printf("%s= more than 2^64 candidates\n", any ? " " : "");
    else printf("%s%llu candidate%s\n", any ? " = " : "", (unsigned long long)s.count, s.count == 1 ? "" : "s");
    if (s.sample > 0)
        printf("sample = %lld (seed %llu): a sweep covers %llu of them\n", (long long)s.sample,
               (unsigned long long)s.seed,
               (unsigned long long)(!s.count_overflow && (uint64_t)s.sample > s.count ? s.count : (uint64_t)s.sample));
    char said[1024];
    int rc = 0;
    if (dse_search_resolve(&s, said, (int)sizeof said, &err)) rc = fail(&err); /* what dse sweep would choose */
    else fputs(said, stdout);
    dse_space_free(&s);
    return rc;
}

static enum dse_status write_candidate(FILE *f, const struct dse_space *s, uint64_t k, int prototxt,
                                       struct dse_net *net, struct dse_err *err) {
    struct dse_mp mp;
    char id[DSE_ID_SIZE];
    enum dse_status st;
    dse_space_candidate(s, k, &mp);
    if ((st = dse_space_build(s, &mp, net, err))) return st;
    dse_space_id(&mp, id);
    snprintf(net->name, sizeof net->name, "%.70s_%s", s->name, id);
    return prototxt ? dse_prototxt_write(f, net, err) : dse_netcfg_write(f, net, err);
}

static int cmd_generate(const struct dse_opt_cmd *c, const struct dse_opt_args *a) {
    struct dse_space s;
    struct dse_err err = { 0 };
    struct dse_net net;
    long long index = OPT_NUM(INDEX);
    int prototxt = 0, rc = 0;
    prototxt = OPT(FORMAT) && !strcmp(OPT(FORMAT), "prototxt");
    if (FLAG(ALL) + !!OPT(INDEX) + !!OPT(ID) > 1)
        return bad_usage(c->name, "give one of --index, --id and --all%s", "");
    if (OPT(ID) && !dse_space_id_valid(OPT(ID)))
        return bad_usage(c->name, "--id '%s' is not a candidate id; expected c and 16 hex digits, "
                                  "e.g. c3f1a9d0b2e47c5a1", OPT(ID));
    if (FLAG(ALL) && !OPT(OUT)) return bad_usage(c->name, "--all needs --out DIR%s", ""); /* not empty: a PATH */
    if (dse_space_load(a->pos[0], &s, &err)) return fail(&err);
    dse_net_init(&net, s.name, 1, 1, 1);
    if (OPT(ID)) {
        uint64_t k;
        if (dse_space_find_id(&s, OPT(ID), DSE_SPACE_FIND_MAX, &k, &err)) rc = fail(&err);
        else if (write_candidate(stdout, &s, k, prototxt, &net, &err)) rc = fail(&err);
    } else if (!FLAG(ALL)) {
        if (!s.count_overflow && (uint64_t)index >= s.count) {
            fprintf(stderr, "dse generate: --index %lld is out of range; the space has %llu candidates "
                            "(0 to %llu)\n", index, (unsigned long long)s.count, (unsigned long long)s.count - 1);
            rc = EXIT_BAD_INPUT;
        } else if (write_candidate(stdout, &s, (uint64_t)index, prototxt, &net, &err)) {
            rc = fail(&err);
        }
    } else {
        uint64_t *idx = NULL, n = 0;
        if (dse_space_indices(&s, 1000000, &idx, &n, &err) || dse_fs_mkdirs(OPT(OUT), &err)) {
            rc = fail(&err);
        } else {
            for (uint64_t i = 0; i < n && !rc; i++) {
                struct dse_mp mp;
                char id[DSE_ID_SIZE], path[4096], *buf = NULL;
                size_t len = 0;
                dse_space_candidate(&s, idx[i], &mp);
                dse_space_id(&mp, id);
                snprintf(path, sizeof path, "%s/%s.%s", OPT(OUT), id, prototxt ? "prototxt" : "cfg");
                FILE *m = open_memstream(&buf, &len);
                if (!m) {
                    rc = 1;
                    break;
                }
                enum dse_status st = write_candidate(m, &s, idx[i], prototxt, &net, &err);
                fclose(m);
                if (st || dse_fs_write_atomic(path, buf, len, &err)) rc = fail(&err);
                free(buf);
            }
            if (!rc) fprintf(stderr, "dse generate: wrote %llu networks to %s\n", (unsigned long long)n, OPT(OUT));
        }
        free(idx);
    }
    dse_net_deinit(&net);
    dse_space_free(&s);
    return rc;
}


/* ---- dse data: image folders and packs (issue #13) ------------------------------------ */

static const char usage_data[] =
    "usage: dse data pack DIR --out FILE [--size S] [--format jpeg|raw] [--quality Q] [--channels 1|3]\n"
    "                         [--threads T] [--skip-bad] [--max-pixels N]\n"
    "       dse data info SOURCE [--verify]\n"
    "       dse data bench SOURCE [--size N] [--batch B] [--threads T] [--seconds S] [--aug A] [--split train|val]\n"
    "                             [--max-pixels N]\n"
    "       dse data synth DIR [--classes K] [--train N] [--val N] [--sides MIN-MAX] [--seed S] [--mixed]\n"
    "\n"
    "Image data for dse train and dse sweep (docs/data.md). An image folder is laid out as\n"
    "torchvision's ImageFolder: DIR/train/<class>/*.jpg|jpeg|png|bmp|ppm|pgm|tif|tiff|webp and\n"
    "DIR/val/<class>/... (or test/); classes sorted by name. A pack is that folder decoded once into\n"
    "one random-access file.\n"
    "\n"
    "  pack   decode, resize (short side S) and store every image, on every core; atomic\n"
    "  info   classes, images, format and statistics of a pack or a folder; --verify reads every record\n"
    "  bench  images per second the loader delivers (crop, flip, normalize) from a pack or a folder\n"
    "  synth  write a synthetic image folder (learnable classes) for tests and trials\n"
    "Run 'dse data SUBCOMMAND --help' for its options.\n";

static int cmd_data_pack(const struct dse_opt_cmd *c, const struct dse_opt_args *a) {
    struct dse_imgfolder f;
    struct dse_pack_opts o;
    struct dse_pack_summary sum;
    struct dse_err err = { 0 };
    int rc;
    dse_pack_opts_default(&o);
    if (!OPT(OUT)) return bad_usage(c->name, "--out FILE is required (the pack to write)%s", ""); /* not empty: a PATH */
    dse_opts_bind(c, a, &o); /* --size, --quality, --threads, --skip-bad */
    if (o.size > 0 && o.size < 8) return bad_usage(c->name, "--size '%s' is not 0 or an integer from 8 to 4096", OPT(PACK_SIZE));
    o.format = o.size > 0 && o.size <= DSE_PACK_RAW_SIDE_MAX ? DSE_PACK_RAW : DSE_PACK_JPEG;
    if (OPT(FORMAT)) {
        o.format = !strcmp(OPT(FORMAT), "raw") ? DSE_PACK_RAW : DSE_PACK_JPEG;
    }
    if (OPT(CHANNELS)) {
        o.channels = OPT(CHANNELS)[0] - '0';
    }
    o.max_pixels = OPT_INT(MAX_PIXELS, 0);
    if (dse_imgfolder_scan(a->pos[0], &f, &err)) {
        dse_imgfolder_deinit(&f);
        return fail(&err);
    }
    fprintf(stderr, "dse data pack: %s: %d classes, %d train + %d %s images%s; short side %d, %s, %d thread%s\n",
            a->pos[0], f.classes, f.count[0], f.count[1], f.val_name[0] ? f.val_name : "val",
            f.ignored ? " (files without .jpg/.jpeg/.png ignored)" : "", o.size,
            o.format == DSE_PACK_JPEG ? "JPEG" : "raw", o.threads, o.threads == 1 ? "" : "s");
    if (!f.val_name[0]) /* it packs, but dse train and dse eval would refuse it (issue #31) */
        fprintf(stderr, "dse data pack: warning: %s has no val/ or test/ folder: the pack will have no evaluation "
                        "split, which dse train and dse eval refuse; add %s/val/<class>/... with images of each "
                        "class\n", a->pos[0], a->pos[0]);
    if (dse_dataprep_pack(&f, OPT(OUT), &o, stderr, isatty(2), &sum, &err)) {
        rc = fail(&err);
    } else {
        printf("%s: %d train + %d %s images of %d classes, %.1f MB, %.1f s (%.0f img/s)%s\n", OPT(OUT),
               sum.records[0], sum.records[1], f.val_name[0] ? f.val_name : "val", f.classes, (double)sum.bytes / 1e6,
               sum.seconds, (sum.records[0] + sum.records[1] + sum.skipped) / (sum.seconds > 0 ? sum.seconds : 1e-9), "");
        if (sum.skipped) printf("skipped %d images that did not decode (named above)\n", sum.skipped);
        printf("next: dse train NET --data %s [--input C,H,W --classes %d]\n", OPT(OUT), f.classes);
        rc = 0;
    }
    dse_imgfolder_deinit(&f);
    return rc;
}

static int cmd_data_info(const struct dse_opt_cmd *c, const struct dse_opt_args *a) {
    struct dse_err err = { 0 };
    struct dse_data_info info;
    (void)c;
    if (dse_pack_named(a->pos[0])) {
        struct dse_pack *p;
        if (dse_pack_open(a->pos[0], &p, &err)) return fail(&err);
        printf("%s: dse pack v%d, %s%s, %d channel%s, short side %d, %zu bytes\n", a->pos[0], p->version,
               p->format == DSE_PACK_JPEG ? "JPEG" : "raw pixels", p->format == DSE_PACK_JPEG ? " records" : "",
               p->channels, p->channels == 1 ? "" : "s", p->short_side, p->size);
        printf("splits: %s %d images, %s %d images\n", p->split_name[0], p->count[0],
               p->split_name[1][0] ? p->split_name[1] : "val", p->count[1]);
        printf("classes (%d):", p->classes);
        for (int k = 0; k < p->classes && k < 20; k++) printf(" %s", p->class_names[k]);
        printf("%s\nmean:", p->classes > 20 ? " ..." : "");
        for (int ch = 0; ch < p->channels; ch++) printf(" %.6f", p->mean[ch]);
        printf("  std:");
        for (int ch = 0; ch < p->channels; ch++) printf(" %.6f", p->std[ch]);
        printf("  (of pixel/255 over the train split)\n");
        int rc = 0;
        if (FLAG(VERIFY)) {
            if (dse_pack_verify(p, 1, &err)) rc = fail(&err);
            else printf("verified: every record's CRC-32 matches and every record decodes\n");
        }
        dse_pack_close(p);
        return rc;
    }
    if (dse_data_probe(a->pos[0], NULL, &info, &err)) return fail(&err);
    printf("%s: %s, %d classes, ", a->pos[0], info.kind == DSE_DATA_KIND_FOLDER ? "image folder" : info.name,
           info.classes);
    if (info.c) printf("%d channel%s", info.c, info.c == 1 ? "" : "s");
    else printf("JPEG and PNG images of any mode and size (made 1 or 3 channels when packed)");
    if (info.h) printf(" of %dx%d", info.h, info.w);
    if (info.n_train) printf(", %d train + %d evaluation images", info.n_train, info.n_test);
    printf("\n");
    if (info.kind == DSE_DATA_KIND_FOLDER) printf("next: dse data pack %s --out FILE.pack\n", a->pos[0]);
    return 0;
}

static int cmd_data_bench(const struct dse_opt_cmd *c, const struct dse_opt_args *a) {
    struct dse_err err = { 0 };
    struct dse_pack *p = NULL;
    struct dse_imgfolder f;
    struct dse_loader *l = NULL;
    struct dse_loader_opts lo;
    struct dse_data_bench_settings s = { 0 };
    int rc;
    memset(&f, 0, sizeof f);
    c->settings_default(&s);
    dse_opts_bind(c, a, &s); /* every option but --max-pixels */
    const int size = s.size, batch = s.batch, threads = s.threads, seconds = s.seconds, split = s.split;
    const enum dse_aug_mode aug = (enum dse_aug_mode)s.aug;
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN); /* img_per_s_per_core */
    memset(&lo, 0, sizeof lo);
    lo.batch = batch, lo.shuffle = 1, lo.seed = 1, lo.out_h = size, lo.out_w = size, lo.workers = threads;
    const int is_pack = dse_pack_named(a->pos[0]);
    int channels = 3, short_side = size;
    if (is_pack) {
        if (dse_pack_open(a->pos[0], &p, &err)) return fail(&err);
        channels = p->channels;
        if (p->short_side) short_side = p->short_side;
        dse_data_norm_of_pack(p, &lo.norm);
    } else if (dse_imgfolder_scan(a->pos[0], &f, &err)) {
        dse_imgfolder_deinit(&f);
        return fail(&err);
    } else {
        dse_data_norm_imagenet(channels, &lo.norm); /* as the torchvision comparison uses */
        lo.decode_min_short = size, lo.max_pixels = OPT_INT(MAX_PIXELS, 0);
    }
    dse_data_aug_of(aug, short_side, &lo.aug, &lo.center);
    float *x = NULL;
    int *labels = NULL;
    if ((is_pack ? dse_loader_new_pack(p, split, &lo, &l, &err) : dse_loader_new_folder(&f, split, channels, &lo, &l, &err))) {
        rc = fail(&err);
        goto out;
    }
    x = malloc((size_t)batch * channels * size * size * sizeof *x);
    labels = malloc((size_t)batch * sizeof *labels);
    if (!x || !labels) {
        rc = 1;
        goto out;
    }
    long long images = 0;
    int count, warm = 2, epoch = 0;
    double t0 = 0, t = 0;
    dse_loader_start_epoch(l, epoch);
    for (;;) {
        if (!dse_loader_next(l, x, labels, &count)) {
            if (dse_loader_status(l, &err)) {
                rc = fail(&err);
                goto out;
            }
            dse_loader_start_epoch(l, ++epoch);
            continue;
        }
        if (warm > 0 && --warm == 0) {
            t0 = now_s();
            continue;
        }
        if (warm > 0) continue;
        images += count;
        t = now_s() - t0;
        if (t >= seconds) break;
    }
    char augs[32];
    snprintf(augs, sizeof augs, "%s%s", lo.aug.rrc ? "rrc" : lo.aug.crop_pad ? "crop" : "center", lo.aug.flip ? "+flip" : "");
    printf("name=loader.dse source=%s format=%s threads=%d batch=%d size=%d aug=%s images=%lld seconds=%.2f "
           "img_per_s=%.1f img_per_s_per_core=%.1f\n", is_pack ? "pack" : "folder",
           is_pack ? (p->format == DSE_PACK_JPEG ? "jpeg" : "raw") : "files", threads, batch, size, augs, images, t,
           images / t, images / t / (threads < cpus ? threads : cpus));
    rc = 0;
out:
    free(x);
    free(labels);
    dse_loader_free(l);
    dse_pack_close(p);
    dse_imgfolder_deinit(&f);
    return rc;
}

static int cmd_data_synth(const struct dse_opt_cmd *c, const struct dse_opt_args *a) {
    struct dse_synth_opts o;
    struct dse_err err = { 0 };
    dse_synth_opts_default(&o);
    dse_opts_bind(c, a, &o); /* --classes, --train, --val, --sides, --seed, --mixed */
    if (dse_synth_folder(a->pos[0], &o, &err)) return fail(&err);
    printf("%s: %d classes x (%d train + %d val) images, sides %d to %d%s\nnext: dse data pack %s --out %s.pack\n",
           a->pos[0], o.classes, o.train_per_class, o.val_per_class, o.min_side, o.max_side,
           o.mixed ? ", every decoder path" : ", RGB JPEG", a->pos[0], a->pos[0]);
    return 0;
}

static int cmd_export(const struct dse_opt_cmd *c, const struct dse_opt_args *a) {
    struct dse_export_req q = { .format = DSE_EXPORT_ONNX };
    struct dse_err err = { 0 };
    int rc;
    dse_opts_bind(c, a, &q); /* --format, --out, --checkpoint, --id, --best: the checks below keep
                                a sweep's apart from a network file's */
    if ((rc = opt_fit(c->name, a, &q.fit)) >= 0) return rc;
    const int sweep = OPT(ID) || FLAG(BEST);
    if (OPT(CHECKPOINT) && sweep) return bad_usage(c->name, "give NET --checkpoint FILE, or SWEEPDIR --id/--best, not both%s", "");
    if (!OPT(CHECKPOINT) && !sweep)
        return bad_usage(c->name, "say where the weights are: --checkpoint FILE (with a network file), or --id ID or "
                                  "--best (with a sweep directory)%s", "");
    if (OPT(ID) && FLAG(BEST)) return bad_usage(c->name, "give --id or --best, not both%s", "");
    if (OPT(MAX_MB) && !FLAG(BEST)) return bad_usage(c->name, "--max-mb goes with --best%s", "");
    if (OPT(MAX_MB)) q.max_mb = a->real[DSE_OPT_MAX_MB];
    if (OPT(ID) && !dse_space_rep_id_valid(OPT(ID)))
        return bad_usage(c->name, "--id '%s' is not a candidate id (c and 16 hex digits, as dse report shows them, "
                                  "and r1 to r63 for a replicate)",
                         OPT(ID));
    if (sweep && (q.fit.c || q.fit.classes))
        return bad_usage(c->name, "--input and --classes fit a network file; a sweep's candidates are fitted already%s", "");
    if (sweep) q.sweep_dir = a->pos[0];
    else q.net_path = a->pos[0];
    return dse_export_run(&q, stderr, &err) ? (sweep ? fail(&err) : fail_net(&err, a->pos[0])) : 0;
}

static int cmd_import(const struct dse_opt_cmd *c, const struct dse_opt_args *a) {
    struct dse_input_shape fit;
    struct dse_data_norm norm = { 0 };
    struct dse_err err = { 0 };
    char out[4200];
    int rc;
    if ((rc = opt_fit(c->name, a, &fit)) >= 0) return rc;
    if (!OPT(MEAN) != !OPT(STD)) return bad_usage(c->name, "--mean and --std go together%s", "");
    if (OPT(MEAN)) {
        double mean[DSE_DATA_MAX_CHANNELS], std[DSE_DATA_MAX_CHANNELS];
        int nm = dse_opts_list(a, DSE_OPT_MEAN, NULL, mean, DSE_DATA_MAX_CHANNELS);
        int ns = dse_opts_list(a, DSE_OPT_STD, NULL, std, DSE_DATA_MAX_CHANNELS);
        for (int i = 0; i < nm && i < ns; i++) norm.mean[i] = (float)mean[i], norm.std[i] = (float)std[i];
        if (nm != ns) return bad_usage(c->name, "--mean and --std give different channel counts%s", "");
        norm.c = nm;
    }
    const int onnx = dse_has_ext(a->pos[0], ".onnx");
    if (onnx && a->n_pos != 1)
        return bad_usage(c->name, "MODEL.onnx holds its network: give no NET (unexpected '%s')", a->pos[1]);
    if (!onnx && a->n_pos != 2)
        return bad_usage(c->name, "a .caffemodel needs its network: give MODEL NET (or a MODEL.onnx alone)%s", "");
    if (!onnx && OPT(NET_OUT)) return bad_usage(c->name, "--net-out goes with MODEL.onnx%s", "");
    if (OPT(OUT)) {
        snprintf(out, sizeof out, "%s", OPT(OUT));
    } else {
        snprintf(out, sizeof out, "%s", a->pos[0]);
        size_t n = strlen(out);
        if (n > 11 && !strcmp(out + n - 11, ".caffemodel")) out[n - 11] = '\0';
        if (onnx) out[n - 5] = '\0';
        snprintf(out + strlen(out), sizeof out - strlen(out), ".ckpt");
    }
    if (onnx) {
        char net_out[4200];
        size_t n = strlen(out);
        snprintf(net_out, sizeof net_out, "%.*s.cfg", (int)(dse_has_ext(out, ".ckpt") ? n - 5 : n), out);
        if (OPT(NET_OUT)) snprintf(net_out, sizeof net_out, "%s", OPT(NET_OUT));
        return dse_import_onnx_run(a->pos[0], &fit, &norm, OPT(CLASSES_FILE), out, net_out, stderr, &err)
                   ? fail(&err)
                   : 0;
    }
    return dse_import_run(a->pos[0], a->pos[1], &fit, &norm, OPT(CLASSES_FILE), out, stderr, &err)
               ? fail_net(&err, a->pos[1])
               : 0;
}

/* The function that runs each command of DSE_COMMANDS (dse/options.h). */
typedef int cmd_fn(const struct dse_opt_cmd *c, const struct dse_opt_args *a);
static cmd_fn *const cmd_runs[DSE_CMD_COUNT] = {
#define X(e, fn, name) [DSE_CMD_##e] = cmd_##fn,
    DSE_COMMANDS(X)
#undef X
};

static int run_cmd(enum dse_cmd k, int argc, char **argv) {
    const struct dse_opt_cmd *c = &dse_opt_cmds[k];
    struct dse_opt_args a;
    struct dse_err err = { 0 };
    if (dse_opts_parse(c, argc, argv, &a, &err)) return bad_usage(c->name, "%s", err.msg);
    if (a.help) return dse_opts_usage(stdout, c), 0;
    return cmd_runs[k](c, &a);
}

/* " (did you mean 'analyze'?)" for a mistyped command name (data: a subcommand of dse data),
 * into buf; "" when no command is close (dse_word_suggest). */
static const char *near_command(const char *name, int data, char *buf, int size) {
    char names[512] = "", near[64];
    for (int k = 0; k < DSE_CMD_COUNT; k++) {
        const char *n = dse_opt_cmds[k].name;
        size_t at = strlen(names);
        if (!strncmp(n, "data ", 5) == !!data) snprintf(names + at, sizeof names - at, " %s", data ? n + 5 : n);
    }
    if (!data) strcat(names, " data help");
    buf[0] = '\0';
    if (dse_word_suggest(names, name, near, (int)sizeof near))
        snprintf(buf, (size_t)size, " (did you mean '%s'?)", near);
    return buf;
}

static int run(int argc, char **argv) {
    if (argc < 2) {
        fputs(usage_main, stderr);
        return EXIT_BAD_INPUT;
    }
    const char *name = argv[1];
    char        hint[96];
    if (!strcmp(name, "--help") || !strcmp(name, "-h")) return fputs(usage_main, stdout), 0;
    if (!strcmp(name, "--version")) {
        const struct dse_blas_info *b = dse_blas_setup();
        printf("dse " DSE_VERSION " (backends: %s)\nblas: %s\nblas kernels: %s (%s)\ncpu features: %s\n",
               dse_engine_backends(), b->library, b->core, b->how, b->features);
        return 0;
    }
    if (!strcmp(name, "help")) {
        /* dse help, dse help --help, dse help help: what help does is in the main usage */
        if (argc == 2 || !strcmp(argv[2], "--help") || !strcmp(argv[2], "-h") || !strcmp(argv[2], "help"))
            return fputs(usage_main, stdout), 0;
        name = argv[2];
        for (int k = 0; k < DSE_CMD_COUNT; k++)
            if (strncmp(dse_opt_cmds[k].name, "data ", 5) && !strcmp(name, dse_opt_cmds[k].name))
                return dse_opts_usage(stdout, &dse_opt_cmds[k]), 0;
        if (!strcmp(name, "data")) return fputs(usage_data, stdout), 0;
        fprintf(stderr, "dse help: unknown command '%s'%s\n\n%s", name, near_command(name, 0, hint, sizeof hint),
                usage_main);
        return EXIT_BAD_INPUT;
    }
    if (!strcmp(name, "data")) {
        const char *sub = argc > 2 ? argv[2] : "";
        if (!strcmp(sub, "--help") || !strcmp(sub, "-h")) return fputs(usage_data, stdout), 0;
        for (int k = 0; k < DSE_CMD_COUNT; k++)
            if (!strncmp(dse_opt_cmds[k].name, "data ", 5) && !strcmp(sub, dse_opt_cmds[k].name + 5))
                return run_cmd((enum dse_cmd)k, argc - 3, argv + 3);
        fprintf(stderr, "dse data: %s '%s'%s\n\n%s", sub[0] ? "unknown subcommand" : "expected a subcommand", sub,
                sub[0] ? near_command(sub, 1, hint, sizeof hint) : "", usage_data);
        return EXIT_BAD_INPUT;
    }
    for (int k = 0; k < DSE_CMD_COUNT; k++)
        if (strncmp(dse_opt_cmds[k].name, "data ", 5) && !strcmp(name, dse_opt_cmds[k].name))
            return run_cmd((enum dse_cmd)k, argc - 2, argv + 2);
    fprintf(stderr, "dse: unknown command '%s'%s\n\n%s", name, near_command(name, 0, hint, sizeof hint), usage_main);
    return EXIT_BAD_INPUT;
}

/* Output that did not reach its file is a failure, not a silent success (> /dev/full). */
int main(int argc, char **argv) {
    dse_blas_setup(); /* before any BLAS call: kernels that this CPU runs best (engine/cpu/blas.c) */
    int rc = run(argc, argv);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "dse: cannot write the output: %s\n", strerror(errno));
        return 1;
    }
    return rc;
}
