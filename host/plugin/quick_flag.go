package plugin
var noCOD = false
