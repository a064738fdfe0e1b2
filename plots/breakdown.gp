# breakdown.gp — commscale's step breakdown figure: one stacked bar per node count, the parts of
# the step (compute, exposed communication per group, pipeline waits, bubble, optimizer) stacked
# in seconds or, with cs_share, as shares of the step (the step under each bar), one panel per plan.
#
# Loaded by the PREFIX.gp that `commscale predict --plot PREFIX` writes, after it has set the
# terminal, the output and these variables:
#   cs_data                  the .dat: one index block per plan; column 1 x (nodes), columns
#                            2..cs_ncols+1 the parts, column cs_ncols+2 their total
#   cs_title, cs_xlabel, cs_ylabel   texts ('' for none)
#   cs_ncols, cs_col[j]      number of parts and the legend text of part j (1-based)
#   cs_share                 1: each bar as the shares of its total (%), the total step under
#                            its label, so that a short step's parts show as well as a long one's
#   cs_name[i+1]             panel title (the plan) of index block i
# Edit freely: nothing here is read back by commscale.

reset
set termoption noenhanced
set encoding utf8
set style data histograms
set style histogram rowstacked
set style fill solid 0.9 border lc rgb '#ffffff'
set boxwidth 0.75 relative
set xlabel cs_xlabel
set ylabel cs_ylabel
if (!exists("cs_share")) cs_share = 0
if (cs_share) { set yrange [0:100]; set ylabel 'share of the step (%)' } else { set yrange [0:*] }
set xtics nomirror out
set ytics nomirror out
set border 3 lw 1 lc rgb '#555555'
set grid ytics lc rgb '#e4e4e4' lw 1 dt 1
set key outside right top vertical Left reverse noenhanced spacing 1.1 samplen 1.5 font ',10'
set key box lc rgb '#cccccc' width 1 height 0.5

# one colour per part: compute, tp, cp, ep, dp, pp, bubble, optimizer, ...
part_color(j) = word('#4c72b0 #dd8452 #937860 #8172b3 #c44e52 #55a868 #b0b0b0 #da8bc3 ' . \
                     '#ccb974 #64b5cd', (j - 1) % 10 + 1)

npanel = |cs_name|
set multiplot layout npanel, 1 title cs_title font ',13'
do for [p = 0:npanel - 1] {
  set title cs_name[p + 1] noenhanced font ',11'
  if (cs_share) {
    plot for [j = 1:cs_ncols] cs_data index p \
         using (100 * column(j + 1) / column(cs_ncols + 2)):xtic(sprintf('%g (%.3g s)', column(1), column(cs_ncols + 2))) \
         lc rgb part_color(j) title cs_col[j]
  } else {
    plot for [j = 1:cs_ncols] cs_data index p using (column(j + 1)):xtic(1) \
         lc rgb part_color(j) title cs_col[j]
  }
}
unset multiplot
