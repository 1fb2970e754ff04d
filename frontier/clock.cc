#include "frontier/clock.h"
