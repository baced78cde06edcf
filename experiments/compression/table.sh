#!/bin/sh
# experiments/compression/table.sh WORK: run.sh's results in WORK as markdown tables (README.md).
#   WORK/NET/sSEED.json                  the float model (dse train --json: top1)
#   WORK/NET/sSEED-dD-bB-fF.out          a compressed one (dse compress's summary: bytes, top-1s)
#   WORK/NET/sSEED-ctlF.json             the control: the float model trained 2F epochs more
# One row per design and setting: means and sample standard deviations over the seeds present
# (n says how many), top-1 in percent, sizes in bytes; the difference to the float models' mean.
set -eu
W=${1:?usage: table.sh WORK}
cd "$W"
for f in */s*.json */s*-d*-b*-f*.out; do [ -f "$f" ] && echo "$f"; done | awk '
function top1_json(path,   line, v) {
    v = ""
    while ((getline line < path) > 0)
        if (line ~ /"top1": *[0-9.]+/) { sub(/.*"top1": */, "", line); sub(/[^0-9.].*/, "", line); v = line }
    close(path)
    return v
}
function add(key, v) { n[key]++; s[key] += v; q[key] += v * v }
function mean(key) { return n[key] ? s[key] / n[key] : 0 }
function sd(key,   m) { if (n[key] < 2) return 0; m = mean(key); return sqrt((q[key] - n[key] * m * m) / (n[key] - 1)) }
{
    path = $0
    split(path, a, "/"); net = a[1]; file = a[2]
    nets[net] = 1
    if (file ~ /^s[0-9]+\.json$/) { v = top1_json(path); if (v != "") add("float " net, 100 * v); next }
    if (file ~ /^s[0-9]+-ctl[0-9]+\.json$/) {
        f = file; sub(/^s[0-9]+-ctl/, "", f); sub(/\.json$/, "", f)
        v = top1_json(path); if (v != "") add("ctl " net " " f, 100 * v); ctl[net " " f] = 1
        next
    }
    # sSEED-dD-bB-fF.out
    k = file; sub(/^s[0-9]+-/, "", k); sub(/\.out$/, "", k)
    split(k, p, "-"); d = substr(p[1], 2); b = substr(p[2], 2); f = substr(p[3], 2)
    bytes = ""; top = ""
    while ((getline line < path) > 0) {
        if (line ~ / bytes, float32 [0-9]+ bytes/) {
            x = substr(line, index(line, ": ") + 2); split(x, w, " "); bytes = w[1]
            y = line; sub(/.*float32 /, "", y); split(y, w2, " "); fb[net] = w2[1]
        }
        if (line ~ /^top-1:/) { z = line; sub(/.*compressed /, "", z); sub(/%.*/, "", z); top = z }
    }
    close(path)
    if (bytes == "" || top == "") next
    key = net " " d " " b " " f
    rows[key] = 1
    add("top " key, top); add("bytes " key, bytes)
}
END {
    order["sq"] = 1; order["sr1"] = 2; order["sr0125"] = 3
    name["sq"] = "SqueezeNet-FMNIST (full width)"; name["sr1"] = "squeeze ratio 1.0 (quarter width)"
    name["sr0125"] = "squeeze ratio 0.125 (quarter width)"
    print "| design | float32 bytes | float top-1 (n) | density | bits | fine-tuning | .dsez bytes | smaller | compressed top-1 (n) | vs float | control top-1 (n) | vs control |"
    print "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    for (o = 1; o <= 3; o++) for (net in nets) if (order[net] == o) {
        fm = mean("float " net)
        nk = 0
        for (key in rows) { split(key, p, " "); if (p[1] == net) keys[++nk] = key }
        # sort: fine-tuning descending, then density descending, then bits descending
        for (i = 2; i <= nk; i++) for (j = i; j > 1; j--) {
            split(keys[j - 1], ka, " "); split(keys[j], kb, " ")
            if (ka[4] + 0 < kb[4] + 0 || (ka[4] == kb[4] && (ka[2] + 0 < kb[2] + 0 || (ka[2] == kb[2] && ka[3] + 0 < kb[3] + 0)))) {
                t = keys[j]; keys[j] = keys[j - 1]; keys[j - 1] = t
            }
        }
        for (i = 1; i <= nk; i++) {
            split(keys[i], p, " ")
            tm = mean("top " keys[i]); bm = mean("bytes " keys[i])
            c = "ctl " net " " p[4]
            cs = n[c] ? sprintf("%.2f ± %.2f (%d)", mean(c), sd(c), n[c]) : "-"
            cd = n[c] ? sprintf("%+.2f", tm - mean(c)) : "-"
            printf "| %s | %d | %.2f ± %.2f (%d) | %s | %s | %s + %s | %d | %.1fx | %.2f ± %.2f (%d) | %+.2f | %s | %s |\n",
                name[net], fb[net], fm, sd("float " net), n["float " net], p[2], p[3], p[4], p[4], bm,
                fb[net] / bm, tm, sd("top " keys[i]), n["top " keys[i]], tm - fm, cs, cd
        }
        delete keys
    }
}'
