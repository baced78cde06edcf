/* synth.h: synthetic image folders (class-per-folder, like ImageNet's) for tests,
 * benchmarks and the demo experiment: each class is a colour pair and a stripe pattern, so
 * a small CNN can learn them after random-resized-crop and flips. docs/data.md ("Image
 * folders and packs") describes the folder layout the loader reads. */
#ifndef DSE_DATA_SYNTH_H
#define DSE_DATA_SYNTH_H

#include <stdint.h>

#include "base/base.h"

struct dse_synth_opts {
    int      classes;            /* 2..1000 */
    int      train_per_class;    /* 1..1000000 */
    int      val_per_class;      /* 0..1000000; 0: no val/ folder */
    int      min_side, max_side; /* width and height each drawn uniformly in [min_side,
                                    max_side], 8 <= min_side <= max_side <= 4096 */
    int      mixed;              /* 0: every image an RGB JPEG of quality 90 (like photos);
                                    1: image i of a class folder is format i % 8 of: RGB JPEG,
                                    gray PNG, RGBA PNG, 16-bit RGB PNG, gray JPEG, CMYK JPEG
                                    (Adobe, inverted), palette PNG with tRNS, RGB PNG, so every
                                    path of dse_image_decode is taken */
    uint64_t seed;
};

/* 10 classes, 20 train + 5 val images per class, sides 48..96, mixed 0, seed 1. */
void dse_synth_opts_default(struct dse_synth_opts *o);

/* Write dir/train/class_KK/img_NNNNN.{jpg,png} and, if val_per_class > 0, dir/val/...:
 * KK is the class index zero-padded to the digits of classes - 1 (at least 2), so sorting
 * the folder names gives the class order; NNNNN is the image's index in its folder, 5
 * digits or more. Creates dir and its parents; existing files of the same names are
 * overwritten, others are left alone. The pixels depend only on o (PCG32 streams drawn
 * from o->seed and each image's place) and on the C library's sin and cos, not on what
 * dir held; the file bytes also on the libjpeg and zlib versions.
 * Errors: DSE_ERR_CONFIG for options out of range (naming the option), DSE_ERR_IO naming
 * the path that could not be created or written (err->file is left empty: the path is in
 * the message), DSE_ERR_NOMEM. Files already written stay. Prints nothing. */
enum dse_status dse_synth_folder(const char *dir, const struct dse_synth_opts *o,
                                 struct dse_err *err);

#endif
