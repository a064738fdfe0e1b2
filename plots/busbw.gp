# busbw.gp — commscale's bus-bandwidth figure: busbw (GB/s) against message size (bytes, log2
# axis with K/M/G labels as nccl-tests names sizes). Measured points, the fitted model's line at
# each measured shape in the same colour, and predicted curves for other node counts drawn dashed
# over their lightly shaded ~95% band.
#
# Loaded by the PREFIX.gp that `commscale plot busbw` writes, after it has set the terminal and
# output and these variables:
#   cs_data                          the .dat file: one index block per series; columns
#                                    1 size (B), 2 busbw, 3 busbw_lo, 4 busbw_hi (GB/s),
#                                    5 time, 6 time_lo, 7 time_hi (us)
#   cs_title                         figure title ('' for none)
#   cs_ylog                          1: logarithmic bandwidth axis, 0: linear from 0
#   cs_{pred,fit,meas}_{first,last}  0-based index-block range of each kind (empty: last < first)
#   cs_name[i+1], cs_group[i+1]      legend text and colour slot of index block i
# Edit freely: nothing here is read back by commscale.

reset
set termoption noenhanced
set encoding utf8

# the title centred on the whole canvas (centred on the plot area, a long title beside an
# outside legend ran off the left edge)
unset title
if (strlen(cs_title) > 0) { set label 1000 cs_title at screen 0.5, screen 0.975 center noenhanced font ',13'; set tmargin 3 }
set xlabel 'message size (bytes)'
set ylabel 'bus bandwidth (GB/s)'

# x: log2 sizes labelled every factor 8 (8, 64, 512, 4K, ..., 8G); the range is the data's
size_label(k) = k >= 40 ? sprintf('%dT', 2**(k - 40)) : k >= 30 ? sprintf('%dG', 2**(k - 30)) : \
                k >= 20 ? sprintf('%dM', 2**(k - 20)) : k >= 10 ? sprintf('%dK', 2**(k - 10)) : \
                sprintf('%d', 2**k)
set logscale x 2
set autoscale xfix
set offsets graph 0.01, graph 0.01, 0, 0
set xtics () nomirror out
do for [k = 0:45:3] { set xtics add (size_label(k) 2.0**k) }
set mxtics 3

if (cs_ylog) {
  set logscale y 10
  set format y '%g'
  set mytics 10
  set autoscale yfix
  set offsets graph 0.01, graph 0.01, graph 0.04, graph 0.02
} else {
  unset logscale y
  set yrange [0:*]
  set format y '%g'
  set offsets graph 0.01, graph 0.01, graph 0.04, 0
  set mytics 2
}
set ytics nomirror out
set border 3 lw 1 lc rgb '#555555'
set grid xtics ytics lc rgb '#e4e4e4' lw 1 dt 1, lc rgb '#f2f2f2'
set grid mytics

# the legend sits right of the plot, so it never covers data
set key outside right top vertical Left reverse noenhanced noautotitle spacing 1.1 samplen 2.5 font ',10'
set key box lc rgb '#cccccc' width 1 height 0.5

# measured shapes and their fitted lines: a qualitative palette; predictions: a dark-to-light ramp
# (more nodes, lighter) that stays visible on white
meas_color(g) = word('#d62728 #1f77b4 #2ca02c #ff7f0e #9467bd #8c564b #e377c2 #17becf #bcbd22 #7f7f7f', \
                     g % 10 + 1)
meas_point(g) = word('7 5 9 11 13 15 7 5 9 11', g % 10 + 1) + 0
pred_color(g) = word('#3b0f70 #1f4e9c #1b7f8c #2a9d5c #7a9a01 #6a3d9a #1f78b4 #33a02c #b15928 #666666', \
                     g % 10 + 1)
# one legend entry for every band (each shaded in its prediction's colour), drawn in a neutral
# grey so that it does not name the first prediction's band alone
bands_title = (cs_pred_last >= cs_pred_first) ? \
  (cs_pred_last > cs_pred_first ? "~95% band of each predicted line (its colour)" : "predicted ~95% band") : ''

plot \
  for [i = cs_pred_first:cs_pred_last] cs_data index i using 1:3:4 \
      with filledcurves fc rgb pred_color(cs_group[i + 1]) fs transparent solid 0.10 noborder \
      notitle, \
  keyentry with filledcurves fc rgb '#888888' fs transparent solid 0.25 noborder title bands_title, \
  for [i = cs_pred_first:cs_pred_last] cs_data index i using 1:2 \
      with lines lw 2 dt (8, 4) lc rgb pred_color(cs_group[i + 1]) title cs_name[i + 1], \
  for [i = cs_fit_first:cs_fit_last] cs_data index i using 1:2 \
      with lines lw 1.6 lc rgb meas_color(cs_group[i + 1]) title cs_name[i + 1], \
  for [i = cs_meas_first:cs_meas_last] cs_data index i using 1:2 \
      with points pt meas_point(cs_group[i + 1]) ps 0.8 lc rgb meas_color(cs_group[i + 1]) \
      title cs_name[i + 1]
