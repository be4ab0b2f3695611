package placement

// This file is the package's only use of cgo: the CBC MIP solver through its
// C API (Debian: coinor-libcbc-dev to build, coinor-libcbc3 to run).

/*
#cgo pkg-config: cbc
#include <stdlib.h>
#include <Cbc_C_Interface.h>
*/
import "C"

import (
	"strconv"
	"sync"
	"time"
	"unsafe"
)

// cbcMu serialises every CBC solve: Cbc_solve runs CbcMain1, which keeps
// global state, so concurrent solves garble each other's answers.
var cbcMu sync.Mutex

// CBCVersion returns the version of the linked CBC library.
func CBCVersion() string { return C.GoString(C.Cbc_getVersion()) }

func cbcSolve(m *milp) milpResult {
	ncols := len(m.colLo)
	nrows := len(m.rowLo)
	if ncols == 0 {
		return milpResult{}
	}
	// Copy everything into C memory: cgo forbids passing Go pointers that
	// CBC might keep, and it is cheap next to the solve.
	start := cArray[C.CoinBigIndex](len(m.start))
	defer C.free(unsafe.Pointer(&start[0]))
	for i, v := range m.start {
		start[i] = C.CoinBigIndex(v)
	}
	nnz := max(len(m.index), 1)
	index := cArray[C.int](nnz)
	defer C.free(unsafe.Pointer(&index[0]))
	value := cArray[C.double](nnz)
	defer C.free(unsafe.Pointer(&value[0]))
	for i := range m.index {
		index[i] = C.int(m.index[i])
		value[i] = C.double(m.value[i])
	}
	colLo, colUp, obj := cDoubles(m.colLo), cDoubles(m.colUp), cDoubles(m.obj)
	rowLo, rowUp := cDoubles(m.rowLo), cDoubles(m.rowUp)
	for _, a := range [][]C.double{colLo, colUp, obj, rowLo, rowUp} {
		defer C.free(unsafe.Pointer(&a[0]))
	}

	cbcMu.Lock()
	defer cbcMu.Unlock()
	model := C.Cbc_newModel()
	defer C.Cbc_deleteModel(model)
	C.Cbc_loadProblem(model, C.int(ncols), C.int(nrows), &start[0], &index[0], &value[0],
		&colLo[0], &colUp[0], &obj[0], &rowLo[0], &rowUp[0])
	for j := 0; j < ncols; j++ {
		C.Cbc_setInteger(model, C.int(j))
	}
	// The answer must not depend on the machine: one thread ("threads 0",
	// CBC's default, stated), CBC's fixed random seeds (left at their
	// defaults), and the node limit as the work bound ("maxNodes": "a
	// repeatable way to limit search", CBC's help says). "depthMiniBab
	// -999" turns off the fast depth-first search CBC 2.10 starts after 500
	// nodes on small models (rows + columns < 500), whose nodes the limit
	// does not count: with it a 1,000-node limit ran 148,697 nodes (11 s).
	// The wall-clock limit ("sec", elapsed time) is only a safety net.
	setParam(model, "log", "0")
	setParam(model, "threads", "0")
	setParam(model, "timeMode", "elapsed")
	setParam(model, "sec", strconv.FormatFloat(m.seconds, 'g', -1, 64))
	if m.maxNodes > 0 {
		setParam(model, "maxNodes", strconv.Itoa(m.maxNodes))
		setParam(model, "depthMiniBab", "-999")
	}
	setParam(model, "ratioGap", strconv.FormatFloat(m.gap, 'g', -1, 64))
	if len(m.startIdx) > 0 {
		idx := cArray[C.int](len(m.startIdx))
		defer C.free(unsafe.Pointer(&idx[0]))
		vals := cDoubles(m.startVal)
		defer C.free(unsafe.Pointer(&vals[0]))
		for i, v := range m.startIdx {
			idx[i] = C.int(v)
		}
		C.Cbc_setMIPStartI(model, C.int(len(m.startIdx)), &idx[0], &vals[0])
	}
	// The package's only clock read: CBC checks its wall-clock limit in
	// places that do not all report a stop (preprocessing, heuristics,
	// strong branching), so a solve that lasted at least the limit counts
	// as stopped on time; one that did not cannot have met any of those
	// checks, and its answer is the work bound's.
	t0 := time.Now()
	C.Cbc_solve(model)
	elapsed := time.Since(t0)

	res := milpResult{
		provenOptimal:  C.Cbc_isProvenOptimal(model) != 0,
		stoppedOnNodes: C.Cbc_isNodeLimitReached(model) != 0,
		stoppedOnTime:  C.Cbc_isSecondsLimitReached(model) != 0 || elapsed.Seconds() >= m.seconds,
		nodes:          int(C.Cbc_getNodeCount(model)),
	}
	if C.Cbc_isAbandoned(model) != 0 || C.Cbc_isProvenInfeasible(model) != 0 {
		return res
	}
	best := C.Cbc_bestSolution(model)
	if best == nil {
		return res
	}
	sol := unsafe.Slice((*C.double)(unsafe.Pointer(best)), ncols)
	res.x = make([]float64, ncols)
	for j := range res.x {
		res.x[j] = float64(sol[j])
	}
	return res
}

func setParam(model unsafe.Pointer, name, value string) {
	cn, cv := C.CString(name), C.CString(value)
	C.Cbc_setParameter(model, cn, cv)
	C.free(unsafe.Pointer(cn))
	C.free(unsafe.Pointer(cv))
}

// cArray allocates n (at least 1) zeroed elements of T in C memory.
func cArray[T any](n int) []T {
	n = max(n, 1)
	var zero T
	p := C.calloc(C.size_t(n), C.size_t(unsafe.Sizeof(zero)))
	return unsafe.Slice((*T)(p), n)
}

func cDoubles(v []float64) []C.double {
	out := cArray[C.double](len(v))
	for i, x := range v {
		out[i] = C.double(x)
	}
	return out
}
