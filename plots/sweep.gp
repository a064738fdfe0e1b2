# sweep.gp — commscale's sweep figures: a value (throughput, MFU or speedup) against network
# bandwidth per GPU or against nodes, one curve per plan or plan family (lines with points over
# their lightly shaded band y_lo..y_hi, invisible when the series has none), dashed dark lines for references (ideal linear speedup), drawn over the curves, large points for marked values.
#
# Loaded by the PREFIX.gp that `commscale sweep --plot PREFIX` writes, after it has set the
# terminal, the output and these variables:
#   cs_data                          the .dat: one index block per series; columns 1 x, 2 y,
#                                    3 y_lo, 4 y_hi
#   cs_title, cs_xlabel, cs_ylabel   texts ('' for none); cs_xlog, cs_ylog: 1 for log axes
#   cs_xtics, cs_ytics               space-separated values to label ('' for gnuplot's ticks)
#   cs_{pred,fit,meas}_{first,last}  index-block ranges: curves, references, marks
#   cs_name[i+1], cs_group[i+1]      legend text and colour slot (the plan or family) of block i
# Edit freely: nothing here is read back by commscale.

reset
set termoption noenhanced
set encoding utf8
# the title centred on the whole canvas (centred on the plot area, a long title beside an
# outside legend ran off the left edge)
unset title
if (strlen(cs_title) > 0) { set label 1000 cs_title at screen 0.5, screen 0.975 center noenhanced font ',13'; set tmargin 3 }
set xlabel cs_xlabel
set ylabel cs_ylabel
if (cs_xlog) { set logscale x 10; set format x '%g' } else { unset logscale x }
if (cs_ylog) { set logscale y 10; set autoscale yfix } else { unset logscale y; set yrange [0:*] }
set autoscale xfix
set offsets graph 0.01, graph 0.01, graph 0.05, 0
set xtics nomirror out
set ytics nomirror out
# the tick labels the figure asks for (the swept values), else gnuplot's
if (exists("cs_xtics") && strlen(cs_xtics) > 0) { set xtics (); do for [w in cs_xtics] { set xtics add (w w + 0) } }
if (exists("cs_ytics") && strlen(cs_ytics) > 0) { set ytics (); do for [w in cs_ytics] { set ytics add (w w + 0) } }
set border 3 lw 1 lc rgb '#555555'
set grid xtics ytics mxtics lc rgb '#e4e4e4' lw 1 dt 1, lc rgb '#f2f2f2'
set key outside right top vertical Left reverse noenhanced spacing 1.1 samplen 2.5 font ',10'
set key box lc rgb '#cccccc' width 1 height 0.5

# one colour per family: zero3, dp+tp, tp+pp, 3d
fam_color(g) = word('#d62728 #ff7f0e #1f77b4 #2ca02c #9467bd #8c564b #e377c2 #17becf', g % 8 + 1)

# guarded accessors: a kind with no series gives an empty range, which gnuplot still parses
nm(i) = (i >= 0 && i < |cs_name|) ? cs_name[i + 1] : ''
gr(i) = (i >= 0 && i < |cs_group|) ? cs_group[i + 1] : 0

plot \
  for [i = cs_pred_first:cs_pred_last] cs_data index i using 1:3:4 \
      with filledcurves fs transparent solid 0.15 noborder lc rgb fam_color(gr(i)) notitle, \
  for [i = cs_pred_first:cs_pred_last] cs_data index i using 1:2 \
      with linespoints lw 2 pt 7 ps 0.6 lc rgb fam_color(gr(i)) title nm(i), \
  for [i = cs_fit_first:cs_fit_last] cs_data index i using 1:2 \
      with lines lw 1.6 dt (8, 5) lc rgb '#222222' title nm(i), \
  for [i = cs_meas_first:cs_meas_last] cs_data index i using 1:2 \
      with points pt 7 ps 1.6 lc rgb fam_color(gr(i)) title nm(i)
