/* The release number of vigil: vigil-cc --version, vigil --version and the run reports. */
#ifndef VIGIL_VERSION_H
#define VIGIL_VERSION_H
#define VIGIL_VERSION "0.1.0"
#endif
