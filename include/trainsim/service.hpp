#pragma once
// `trainsim serve` (docs/service.md): the HTTP API, job queue and web page; its job store and what a job runs. Part of
// the public API (docs/architecture.md).
#include "service/job.hpp"
#include "service/job_runner.hpp"
#include "service/job_store.hpp"
#include "service/server.hpp"
