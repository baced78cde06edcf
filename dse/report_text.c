/* report_text.c: how wide the SVG writers' text is (dse_report_text_width, dse/report.h),
 * from a per-character width table, so that plot and curve labels are placed inside the
 * canvas and off error bars and each other (docs/report.md, "Labels"). */
#include "dse/report.h"

/* Advance widths in 1/1000 em of the printable ASCII characters (space .. '~'): the larger
 * of DejaVu Sans's (2048 units per em, scaled) and Helvetica's (Adobe's AFM), so that text
 * measured with them fits whichever sans-serif face renders it. */
static const short char_width[95] = {
    /*  sp    !    "    #    $    %    &    '    (    )    *    +    ,    -    .    / */
      318, 401, 460, 838, 636, 950, 780, 275, 390, 390, 500, 838, 318, 361, 318, 337,
    /*   0    1    2    3    4    5    6    7    8    9    :    ;    <    =    >    ? */
      636, 636, 636, 636, 636, 636, 636, 636, 636, 636, 337, 337, 838, 838, 838, 556,
    /*   @    A    B    C    D    E    F    G    H    I    J    K    L    M    N    O */
     1015, 684, 686, 722, 770, 667, 611, 778, 752, 295, 500, 667, 557, 863, 748, 787,
    /*   P    Q    R    S    T    U    V    W    X    Y    Z    [    \    ]    ^    _ */
      667, 787, 722, 667, 611, 732, 684, 989, 685, 667, 685, 390, 337, 390, 838, 556,
    /*   `    a    b    c    d    e    f    g    h    i    j    k    l    m    n    o */
      500, 613, 635, 550, 635, 615, 352, 635, 634, 278, 278, 579, 278, 974, 634, 612,
    /*   p    q    r    s    t    u    v    w    x    y    z    {    |    }    ~ */
      635, 635, 411, 521, 392, 634, 592, 818, 592, 592, 525, 636, 337, 636, 838,
};

double dse_report_text_width(const char *s, double font_px, int bold) {
    double em = 0;
    for (const unsigned char *u = (const unsigned char *)s; *u; u++) {
        if (*u >= 0x20 && *u < 0x7f) em += char_width[*u - 0x20];
        else if ((*u & 0xc0) != 0x80) em += 1000; /* a character outside ASCII: 1 em */
    }
    return em / 1000.0 * font_px * (bold ? 1.2 : 1.0);
}
