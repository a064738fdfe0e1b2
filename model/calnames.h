/* calnames.h — the words calibration.yaml spells its enumerations with, shared by the file's writer
 * (calwrite.c) and reader (calfile.c); each array in its enum's order. */
#ifndef CS_CALNAMES_H
#define CS_CALNAMES_H

extern const char *const cs_cal_net_form_names[2]; /* enum cs_net_form */
extern const char *const cs_cal_select_names[3];   /* enum cs_select */
extern const char *const cs_cal_source_names[4];   /* enum cs_param_source */
extern const char *const cs_cal_intra_names[2];    /* enum cs_tier: nvlink, pcie */

#endif
