importScripts("probe.js");
probe("service_worker");
