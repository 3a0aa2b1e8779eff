importScripts("probe.js");
probe("worker");
