/* conv_pool.c: cuDNN's conv choices shared by the models of one process (issue #20 item 4).
 * A GPU's sweep workers are threads of one process, each with its own ctx; candidates of
 * one space share most conv shapes, and each used to time cuDNN's engines for them itself,
 * the finds of K packed threads timing each other. With a pool, the first ctx to need a
 * (device, shape, direction) finds it, the others wait for that find and take its choice.
 * Plain host code (a mutex and a condition variable, no CUDA), built and tested in every
 * build (tests/test_engine_cuda.c "host-conv-pool"). The contract is in cuda.h. */
#include "engine/cuda/cuda.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum { DIR_ABSENT = 0, DIR_FINDING, DIR_DONE };

struct pool_entry {
    int                         device;
    int                         state[3]; /* per direction: DIR_ABSENT, _FINDING, _DONE */
    struct dse_cuda_conv_choice c;        /* the key; per direction, its fields once done */
};

struct dse_cuda_conv_pool {
    pthread_mutex_t    mu;
    pthread_cond_t     put; /* a claim ended (a choice kept or a find that failed) */
    struct pool_entry *e;
    int                n, cap;
    int64_t            kept, given; /* choices kept; choices given to a ctx that did not find */
};

enum dse_status dse_cuda_conv_pool_new(struct dse_cuda_conv_pool **out, struct dse_err *err) {
    struct dse_cuda_conv_pool *p = calloc(1, sizeof *p);
    *out = NULL;
    if (!p) return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "out of memory");
    if (pthread_mutex_init(&p->mu, NULL)) {
        free(p);
        return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "cannot make the conv choice pool's mutex");
    }
    if (pthread_cond_init(&p->put, NULL)) {
        pthread_mutex_destroy(&p->mu);
        free(p);
        return dse_err_set(err, DSE_ERR_NOMEM, NULL, 0, "cannot make the conv choice pool's condition variable");
    }
    *out = p;
    return DSE_OK;
}

void dse_cuda_conv_pool_free(struct dse_cuda_conv_pool *p) {
    if (!p) return;
    pthread_cond_destroy(&p->put);
    pthread_mutex_destroy(&p->mu);
    free(p->e);
    free(p);
}

/* The entry of (device, key), under mu; added (nothing chosen) when add; NULL if absent
 * (or out of memory). */
static struct pool_entry *entry(struct dse_cuda_conv_pool *p, int device, const int64_t *key, int add) {
    for (int i = 0; i < p->n; i++)
        if (p->e[i].device == device && !memcmp(p->e[i].c.key, key, sizeof p->e[i].c.key)) return &p->e[i];
    if (!add) return NULL;
    if (p->n == p->cap) {
        const int cap = p->cap ? 2 * p->cap : 32;
        struct pool_entry *e = realloc(p->e, (size_t)cap * sizeof *e);
        if (!e) return NULL;
        p->e = e, p->cap = cap;
    }
    struct pool_entry *e = &p->e[p->n++];
    memset(e, 0, sizeof *e);
    e->device = device;
    memcpy(e->c.key, key, sizeof e->c.key);
    return e;
}

enum dse_cuda_pool_get dse_cuda_conv_pool_get(struct dse_cuda_conv_pool *p, int device, int dir,
                                              struct dse_cuda_conv_choice *c) {
    if (dir < 0 || dir > 2) return DSE_CUDA_POOL_ALONE;
    pthread_mutex_lock(&p->mu);
    enum dse_cuda_pool_get got = DSE_CUDA_POOL_ALONE;
    for (;;) {
        /* looked up again after every wait: the array may have moved */
        struct pool_entry *e = entry(p, device, c->key, 1);
        if (!e) break; /* out of memory: the caller finds alone and keeps nothing here */
        if (e->state[dir] == DIR_DONE) {
            dse_cuda_conv_choice_copy_dir(c, &e->c, dir);
            p->given++;
            got = DSE_CUDA_POOL_TAKEN;
            break;
        }
        if (e->state[dir] == DIR_ABSENT) {
            e->state[dir] = DIR_FINDING;
            got = DSE_CUDA_POOL_CLAIMED;
            break;
        }
        pthread_cond_wait(&p->put, &p->mu); /* another ctx is finding it */
    }
    pthread_mutex_unlock(&p->mu);
    return got;
}

void dse_cuda_conv_pool_put(struct dse_cuda_conv_pool *p, int device, int dir, const int64_t *key,
                            const struct dse_cuda_conv_choice *found) {
    if (dir < 0 || dir > 2) return;
    pthread_mutex_lock(&p->mu);
    struct pool_entry *e = entry(p, device, key, 0);
    if (e && e->state[dir] == DIR_FINDING) {
        if (found) {
            dse_cuda_conv_choice_copy_dir(&e->c, found, dir);
            e->state[dir] = DIR_DONE;
            p->kept++;
        } else {
            e->state[dir] = DIR_ABSENT; /* the next to ask finds it */
        }
        pthread_cond_broadcast(&p->put);
    }
    pthread_mutex_unlock(&p->mu);
}

void dse_cuda_conv_pool_counts(struct dse_cuda_conv_pool *p, int64_t *kept, int64_t *given) {
    pthread_mutex_lock(&p->mu);
    *kept = p->kept, *given = p->given;
    pthread_mutex_unlock(&p->mu);
}
