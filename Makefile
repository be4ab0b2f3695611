# sparkpack — the few targets a newcomer needs.
.PHONY: demo test test-deploy build bench figures mutation clean

# Flags for the demo go in ARGS, e.g. make demo ARGS="--listen 127.0.0.1:8090 --sim-speed 4"
# (every flag: bin/sparkpack demo --help).
demo:  ## run sparkpack on an emulated Mesos cluster and a scratch database (installs what it needs)
	scripts/demo.sh $(ARGS)

test:  ## run every test against real PostgreSQL (installs what it needs)
	scripts/test.sh

test-deploy:  ## bring the docker-compose stack up for real and check it (installs Docker; docs/deploy.md, "Try it on one machine")
	scripts/deploy-test.sh

build: ## build bin/sparkpack
	go build -o bin/sparkpack ./cmd/sparkpack

bench: ## run the placement benchmarks (outside the default test run)
	scripts/bench-placement.sh 1000

figures: ## regenerate the figures the docs state, in place (review with git diff docs/)
	scripts/docs-figures.sh $(ARGS)

mutation: ## mutation testing (gremlins) of the core packages, or ARGS="--diff main" for changed lines only
	scripts/mutation.sh $(ARGS)

clean:
	rm -rf bin
