module github.com/sparkpack/sparkpack

go 1.26.8

require (
	github.com/google/uuid v1.6.0
	github.com/gorilla/mux v1.8.1
	github.com/lib/pq v1.12.3
	github.com/mesos/mesos-go v0.0.11
	github.com/sirupsen/logrus v1.10.2
)

require (
	github.com/gogo/protobuf v1.3.2 // indirect
	github.com/pquerna/ffjson v0.0.0-20190930134022-aa0246cd15f7 // indirect
	golang.org/x/sys v0.13.0 // indirect
)
