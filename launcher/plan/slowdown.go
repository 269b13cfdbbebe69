package plan

// SlowDown is benchmark.slow_down_sleep_time and slow_down_wait_time: at
// the start of each sa-bench point the client asks every decode leader to
// sleep SleepTime seconds per forward (SGLang's POST /slow_down), and
// clears it after WaitTime seconds or when the point ends (srtctl's
// benchmark stage passes the leaders in SA_BENCH_SLOW_DOWN_URLS; its
// benchmark_serving.py sends the requests).
type SlowDown struct {
	SleepTime float64 `json:"sleep_time"`
	WaitTime  float64 `json:"wait_time"`
}

// Environment variables carrying the slow_down settings to the client, as
// srtctl's _get_sa_bench_slow_down_env names them.
const (
	EnvSlowDownURLs  = "SA_BENCH_SLOW_DOWN_URLS"
	EnvSlowDownSleep = "SA_BENCH_SLOW_DOWN_SLEEP_TIME"
	EnvSlowDownWait  = "SA_BENCH_SLOW_DOWN_WAIT_TIME"
)
