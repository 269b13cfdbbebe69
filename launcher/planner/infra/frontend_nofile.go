package infra

import "strings"

// nginxNoFile is frontend.nginx_raise_ulimit's open-files limit: srtctl
// runs `ulimit -n 1048576 && nginx …` and renders worker_rlimit_nofile
// 1048576 into nginx.conf.
const nginxNoFile = 1048576

// raiseNginxNoFile adds worker_rlimit_nofile after worker_processes, where
// srtctl's nginx.conf.j2 puts it.
func raiseNginxNoFile(conf string) string {
	return strings.Replace(conf, "worker_processes auto;\n", "worker_processes auto;\nworker_rlimit_nofile 1048576;\n", 1)
}
