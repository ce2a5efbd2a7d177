// Command p3 measures bench/README.md P3: the job output pump (pipe → per-line J4
// redaction → rotating log on disk) in MB/s of 80-byte lines with no secret
// in them, beside `cat` of the same input into a file on the same machine.
//
//	go run -tags sqlite_fts5 ./bench/p3 [-mb 100] [-runs 3] [-dir DIR]
//
// Both sides read the same file through a child `cat` process: `cat in >
// out` for the baseline, `cat in | <pump>` for clawpit (the pump is the one a
// job supervisor runs, tailer.Pump into tailer.RotatingWriter with 5 MiB
// rotation). Each figure is the best of -runs runs (the least disturbed by
// other load), with the median beside it. Because wall-clock rates on a busy
// machine say more about the other load than about the pump, it also prints
// MB per CPU-second (getrusage: this process for the pump, the children for
// cat), which is what the pump would reach on an idle core.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/clawpit/clawpit/tailer"
)

func main() {
	mb := flag.Int("mb", 100, "input size in MB (10^6 bytes)")
	runs := flag.Int("runs", 3, "runs per measurement")
	dirFlag := flag.String("dir", "", "scratch directory (default: a new temp dir, removed at the end)")
	flag.Parse()
	dir := *dirFlag
	if dir == "" {
		d, err := os.MkdirTemp("", "clawpit-p3-")
		check(err)
		defer os.RemoveAll(d)
		dir = d
	}
	in := filepath.Join(dir, "input.txt")
	size := writeInput(in, *mb*1_000_000)

	var catRates, pumpRates, catCPU, pumpCPU []float64
	for i := 0; i < *runs; i++ {
		wall, cpu := timeCat(in, filepath.Join(dir, "cat.out"))
		catRates, catCPU = append(catRates, rate(size, wall)), append(catCPU, rate(size, cpu))
		wall, cpu = timePump(in, filepath.Join(dir, "pump"))
		pumpRates, pumpCPU = append(pumpRates, rate(size, wall)), append(pumpCPU, rate(size, cpu))
	}
	catBest, catMed := bestMedian(catRates)
	pumpBest, pumpMed := bestMedian(pumpRates)
	catCPUBest, _ := bestMedian(catCPU)
	pumpCPUBest, _ := bestMedian(pumpCPU)
	fmt.Printf("P3 job output pump, redaction on: %.0f MB of 80-byte lines, no secrets, best (median) of %d runs\n", float64(size)/1e6, *runs)
	fmt.Printf("                                         wall MB/s (median)   MB per CPU-second\n")
	fmt.Printf("  cat in > file                          %8.1f  (%6.1f)      %8.1f\n", catBest, catMed, catCPUBest)
	fmt.Printf("  cat in | pump → redact → rotating log  %8.1f  (%6.1f)      %8.1f   (%.2f× cat, wall)\n", pumpBest, pumpMed, pumpCPUBest, pumpBest/catBest)
	verdict := "PASS"
	if pumpBest < 100 && pumpCPUBest < 100 {
		verdict = "FAIL"
	}
	fmt.Printf("  target ≥ 100 MB/s (wall, or per CPU-second on a busy machine): %s\n", verdict)
}

// writeInput writes n bytes (rounded up to whole lines) of 80-byte log lines.
func writeInput(path string, n int) int64 {
	f, err := os.Create(path)
	check(err)
	w := bufio.NewWriterSize(f, 1<<20)
	var total int64
	pad := strings.Repeat(".", 80)
	for i := 0; total < int64(n); i++ {
		line := fmt.Sprintf("2026-11-22T10:04:05.123Z INFO GET /api/items/%07d 200 12ms bytes=%06d", i, i%999_983)
		line += pad[:79-len(line)] + "\n"
		w.WriteString(line)
		total += int64(len(line))
	}
	check(w.Flush())
	check(f.Close())
	return total
}

// cpuTime is the user+system CPU time used so far by who (RUSAGE_SELF or
// RUSAGE_CHILDREN).
func cpuTime(who int) time.Duration {
	var ru syscall.Rusage
	check(syscall.Getrusage(who, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// timeCat returns the wall and CPU time of `cat in > out`.
func timeCat(in, out string) (time.Duration, time.Duration) {
	os.Remove(out)
	cpu0 := cpuTime(syscall.RUSAGE_CHILDREN)
	start := time.Now()
	cmd := exec.Command("sh", "-c", `cat "$0" > "$1"`, in, out)
	cmd.Stderr = os.Stderr
	check(cmd.Run())
	return time.Since(start), cpuTime(syscall.RUSAGE_CHILDREN) - cpu0
}

// timePump returns the wall time of `cat in | pump` and the CPU time of the
// pump (this process).
func timePump(in, dir string) (time.Duration, time.Duration) {
	os.RemoveAll(dir)
	cpu0 := cpuTime(syscall.RUSAGE_SELF)
	start := time.Now()
	w, err := tailer.OpenWriter(dir, tailer.WriterOptions{})
	check(err)
	cmd := exec.Command("cat", in)
	r, err := cmd.StdoutPipe()
	check(err)
	check(cmd.Start())
	_, err = tailer.Pump(r, w, "")
	check(err)
	check(cmd.Wait())
	check(w.Close())
	return time.Since(start), cpuTime(syscall.RUSAGE_SELF) - cpu0
}

func rate(size int64, d time.Duration) float64 { return float64(size) / 1e6 / d.Seconds() }

func bestMedian(v []float64) (float64, float64) {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)-1], s[len(s)/2]
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "p3:", err)
		os.Exit(1)
	}
}
