/* test_sweep.c: training sweeps (sweep/lease.c, sweep/record.c, sweep/sweep_rec.c,
 * sweep/sweep_train.c, sweep/sweep_status.c): the lease protocol (claims, a race of many
 * claimers, expiry rules), successive halving's ranking and rungs, and whole sweeps run with the built
 * dse binary: many workers at once train each candidate exactly once (sweep-multi),
 * workers killed with SIGKILL at random moments and restarted give the same final
 * records and report as an uninterrupted run, bit for bit (sweep-crash), a worker
 * stopped past its lease cannot overwrite the one that took over (sweep-stall), and a
 * diverging candidate is recorded without NaN (sweep-diverge); a worker process of two
 * worker threads, as a GPU's workers run, killed and restarted the same way
 * (sweep-threads); GPU placement (gpu-fit),
 * the out-of-memory re-queue bookkeeping (gpu-oom), the record writer made from
 * sweep/record.def, byte for byte (rec-write), and `dse sweep --gpus` (sweep-gpus:
 * on a machine without a CUDA device, the clear refusal; with one, a sweep on it), and
 * with a device the crash test on it (sweep-crash-gpu: pinned cuDNN choices make a
 * killed and resumed GPU sweep the uninterrupted one, bit for bit). Seed of the kill
 * times: DSE_CRASH_SEED (printed). Asynchronous successive halving (sweep/asha.c): the
 * promotion rule (asha-rule), an architecture's replicates decided together (asha-reps-fate),
 * a 1-worker sweep against an oracle, repeated bit for bit and killed and restarted
 * (sweep-asha, sweep-asha-crash), and two workers, every promotion justified by its file
 * (sweep-asha-multi). The multi-objective evolution proposer (sweep/evolve.c,
 * evolve-*: determinism, feasibility under constraints, no duplicates, exhaustion, the
 * hypervolume, and evolution beating random search on a made-up top-1). The cost-aware
 * model-based proposer (sweep/bo.c, bo-*: the expected hypervolume improvement against Monte
 * Carlo, the Gaussian process by hand, determinism, batches, strata, and bo beating random
 * search on experiments/search_bench's table). `dse sweep --slurm`
 * (sweep/slurm.c): its script (slurm-script), and the command against stand-in Slurm
 * commands (slurm-fake; a real Slurm runs in tests/slurm_test.sh).
 *
 * The cases live in files by subject, all of them one program with this one table:
 * test_sweep_dir.c (leases, the directory's files, records), test_sweep_rungs.c (halving,
 * ASHA), test_sweep_workers.c (GPUs, workers, crashes), test_sweep_report.c (report, status,
 * export), test_sweep_evolve.c (the proposer), test_sweep_bo.c (bo's), test_sweep_search.c (searching sweeps),
 * test_sweep_slurm.c, test_sweep_compress.c (Deep Compression in sweeps); what they share is
 * in sweep_util.c. */
#include "tests/sweep_util.h"

/* Every case once, in the order a run takes them: its id and its function. */
#define SWEEP_CASES(X) \
    X("slurm-script",         test_slurm_script) \
    X("slurm-fake",           test_slurm_fake) \
    X("lease-claim",          test_lease_claim) \
    X("lease-race",           test_lease_race) \
    X("lease-free",           test_lease_free) \
    X("lease-unreadable",     test_lease_unreadable) \
    X("lease-crashes",        test_lease_crashes) \
    X("sweep-bad-lease",      test_bad_lease) \
    X("sweep-ckpt-link",      test_ckpt_link) \
    X("sweep-bad-files",      test_bad_files) \
    X("tally-eta",            test_tally_eta) \
    X("rank",                 test_rank) \
    X("asha-rule",            test_asha_rule) \
    X("asha-reps-fate",       test_asha_reps_fate) \
    X("plan",                 test_plan) \
    X("gpu-fit",              test_gpu_fit) \
    X("gpu-oom",              test_gpu_oom) \
    X("rec-write",            test_rec_write) \
    X("rec-reals",            test_rec_reals) \
    X("sweep-progress",       test_progress_every) \
    X("sweep-gpus",           test_sweep_gpus) \
    X("sweep-bf16",           test_sweep_bf16) \
    X("sweep-diverge",        test_diverge) \
    X("sweep-clash",          test_plan_clash) \
    X("sweep-ckpt-file",      test_ckpt_file) \
    X("sweep-asha",           test_asha) \
    X("sweep-asha-multi",     test_asha_multi) \
    X("sweep-asha-crash",     test_asha_crash) \
    X("sweep-report",         test_report) \
    X("sweep-export",         test_export) \
    X("sweep-pause",          test_pause) \
    X("sweep-conv",           test_conv_auto) \
    X("sweep-multi",          test_multi) \
    X("sweep-crash",          test_crash) \
    X("sweep-threads",        test_threads) \
    X("sweep-crash-gpu",      test_crash_gpu) \
    X("sweep-stall",          test_stall) \
    X("sweep-evo-crash",      test_evo_crash) \
    X("sweep-bo-crash",       test_bo_crash) \
    X("sweep-bo-asha-crash",  test_bo_asha_crash) \
    X("sweep-bo-asha-reps",   test_bo_asha_replicates) \
    X("search-log-bad",       test_search_log_bad) \
    X("sweep-strategy",       test_strategy) \
    X("sweep-auto",           test_search_auto) \
    X("sweep-log-pop",        test_search_log_pop) \
    X("sweep-evo-budgets",    test_evo_budgets) \
    X("sweep-evo-latency",    test_evo_latency) \
    X("sweep-replicates",     test_replicates) \
    X("sweep-evo-replicates", test_evo_replicates) \
    X("evolve-determinism",   test_evolve_determinism) \
    X("evolve-feasible",      test_evolve_feasible) \
    X("evolve-exhaust",       test_evolve_exhaust) \
    X("evolve-hypervolume",   test_evolve_hypervolume) \
    X("evolve-quality",       test_evolve_quality) \
    X("evolve-strata",        test_evolve_strata) \
    X("evolve-aging",         test_evolve_aging) \
    X("evolve-pop",           test_evolve_pop) \
    X("bo-ehvi",              test_bo_ehvi) \
    X("bo-gp",                test_bo_gp) \
    X("bo-determinism",       test_bo_determinism) \
    X("bo-batch",             test_bo_batch) \
    X("bo-strata",            test_bo_strata) \
    X("bo-table",             test_bo_table) \
    X("bo-min-top1",          test_bo_min_top1) \
    X("bo-partial",           test_bo_partial) \
    X("compress-space",       test_compress_space) \
    X("compress-est-head",    test_compress_est_head) \
    X("compress-objective",   test_compress_objective) \
    X("compress-report",      test_compress_report) \
    X("compress-sweep",       test_compress_sweep)

#define SWEEP_CASE_DECLARE(id, fn) void fn(void);
SWEEP_CASES(SWEEP_CASE_DECLARE)

static const struct check_case cases[] = {
#define SWEEP_CASE_ROW(id, fn) { id, fn },
    SWEEP_CASES(SWEEP_CASE_ROW)
};

int main(int argc, char **argv) {
    int rc = check_main(cases, DSE_ARRAY_LEN(cases), argc, argv);
    if (!check_failures) rm_rf(scratch());
    else printf("kept %s for a look\n", scratch());
    return rc;
}
