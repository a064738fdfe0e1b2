/* cmds.h — the verbs of the commscale executable. Each takes (argc, argv) with argv[0] the verb
 * name and returns the process exit status (0 ok, 1 failure, 2 usage). */
#ifndef CS_CLI_CMDS_H
#define CS_CLI_CMDS_H

int cs_cmd_calibrate(int argc, char **argv);
int cs_cmd_import(int argc, char **argv);
int cs_cmd_fit(int argc, char **argv);
int cs_cmd_coll(int argc, char **argv);
int cs_cmd_plot(int argc, char **argv);
int cs_cmd_topology(int argc, char **argv);
int cs_cmd_bench(int argc, char **argv);
int cs_cmd_workload(int argc, char **argv);
int cs_cmd_predict(int argc, char **argv);
int cs_cmd_sweep(int argc, char **argv);
int cs_cmd_search(int argc, char **argv);
int cs_cmd_size_network(int argc, char **argv);
int cs_cmd_report(int argc, char **argv);
int cs_cmd_validate(int argc, char **argv);

#endif
