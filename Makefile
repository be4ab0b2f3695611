# sparkpack — the few targets a newcomer needs.
.PHONY: demo test build bench clean

demo:  ## run sparkpack on an emulated Mesos cluster and a scratch database (installs what it needs)
	scripts/demo.sh

test:  ## run every test against real PostgreSQL (installs what it needs)
	scripts/test.sh

build: ## build bin/sparkpack
	go build -o bin/sparkpack ./cmd/sparkpack

bench: ## run the placement benchmarks (outside the default test run)
	scripts/bench-placement.sh 1000

clean:
	rm -rf bin
