/* SPDX-License-Identifier: GPL-2.0 */
/* JSON strings, for the writers and sections above them. */
#ifndef JSON_PUT_H
#define JSON_PUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "model/report.h"

/* A JSON string (null for NULL), any bytes made valid UTF-8. */
void json_put__string(const char *s, FILE *f);
/* The same, safe inside an HTML <script> element: '<', '>', '&', U+2028 and U+2029 escaped. */
void json_put__script_string(const char *s, FILE *f);

#endif
