#include "topology/Environment.h"
