#pragma once
// What a run prints and writes: the text report and `--json` (reports.hpp), the HTML page (`run --html`), the
// per-collective and per-link CSVs, the validation table (`trainsim validate`), and the number formatting they
// share, and writing a whole output file. Part of the public API (docs/architecture.md).
#include "core/text_file.hpp"  // write_text_file: an output file written whole, its failures named
#include "report/format_utils.hpp"
#include "report/html_report.hpp"
#include "report/reports.hpp"
#include "report/validation_report.hpp"
