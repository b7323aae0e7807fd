module github.com/kraftwatch/kraftwatch/deploy/test

go 1.26.0

require go.yaml.in/yaml/v3 v3.0.6
