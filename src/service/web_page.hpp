#pragma once
// The web page `trainsim serve` answers at `/` (docs/service.md): one HTML document with its CSS and script inline,
// compiled into the binary, so the server needs no files beside itself and the page loads nothing from elsewhere.
// It is a small single-page app over the JSON API: submit a scenario, watch the job list, open a job's result (a
// run's HTML report in a frame), compare two runs. Every string from the API goes into the page as text
// (textContent), never as markup.
#include <string_view>

namespace trainsim::service {

// The whole page, the same bytes for the life of the process.
std::string_view web_page();

}  // namespace trainsim::service
