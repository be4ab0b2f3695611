// Command sparkpack is the one binary of sparkpack: serve (the API, the
// scheduler and the Mesos framework), submit (a client for the API),
// simulate, mesos-sim, demo and version. It wires the packages together and
// holds no scheduling logic of its own.
package main
