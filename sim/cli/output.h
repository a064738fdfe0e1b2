/* output.h — the pieces of the verbs' JSON writers that every verb writes the same way: strings,
 * the opening that names the tool version and the arguments, and the resolved plan.
 *
 * Each verb keeps its own record struct and its three writers (STYLE.md, "Output"); what they
 * share is here so that every JSON file escapes, names the tool and spells a plan alike.
 */
#ifndef CS_CLI_OUTPUT_H
#define CS_CLI_OUTPUT_H

#include <stdio.h>

#include "plan.h"

/* Writes s as a JSON string: quotes and backslashes escaped, control characters as \u00XX. */
void cli_json_string(FILE *f, const char *s);

/* Writes the text s as one CSV field per RFC 4180: always in double quotes, every double quote in
 * it doubled (commas, CR and LF then need nothing more). Every verb writes its free-text fields
 * (names, plans, statuses, notes, reasons) through here and its numbers and fixed keywords bare,
 * so a reader can tell them apart. NULL writes an empty field. */
void cli_csv_field(FILE *f, const char *s);

/* Writes x as a JSON number with printf format fmt ("%.6g"), or null when x is NaN or infinite
 * (JSON has no spelling for them). */
void cli_json_num(FILE *f, const char *fmt, double x);

/* Opens a verb's JSON object: {"tool": "commscale <version>", "arguments": [argv...]
 * (no closing bracket of the object; the caller goes on with ", \"key\": ..."). */
void cli_json_head(FILE *f, int argc, char **argv);

/* Writes the plan as a JSON object, one member per plan key (plan.h's schema): names as
 * strings, booleans as true/false, numbers as they are. */
void cli_json_plan(FILE *f, const struct cs_plan *plan);

#endif
