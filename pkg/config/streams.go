package config

// ProblemKindConfigMap is the kind of Problems of a ConfigMap entry.
const ProblemKindConfigMap = "ConfigMap"
