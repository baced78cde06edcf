# mpi.cmake: the optional MPI build (issue #17), included after the engine is defined.
# engine/dist.c joins dse_engine in every build; with DSE_MPI=AUTO (the default) it is
# compiled against MPI (Debian's libopenmpi-dev) when CMake finds it, ON makes MPI
# required, OFF leaves it out. Without MPI a process is a group of one and `mpirun dse
# train` says the build lacks MPI; everything else builds and tests the same.
set(DSE_MPI AUTO CACHE STRING "MPI for data-parallel training: AUTO, ON or OFF")
set_property(CACHE DSE_MPI PROPERTY STRINGS AUTO ON OFF)
target_sources(dse_engine PRIVATE ${CMAKE_SOURCE_DIR}/engine/dist.c)
set(DSE_HAVE_MPI OFF)
if(NOT DSE_MPI STREQUAL "OFF")
    if(DSE_MPI STREQUAL "ON")
        find_package(MPI REQUIRED COMPONENTS C)
    else()
        find_package(MPI QUIET COMPONENTS C)
    endif()
    if(MPI_C_FOUND)
        set(DSE_HAVE_MPI ON)
        target_compile_definitions(dse_engine PRIVATE DSE_HAVE_MPI)
        target_link_libraries(dse_engine PUBLIC MPI::MPI_C)
    endif()
endif()
message(STATUS "dse: MPI data-parallel training ${DSE_HAVE_MPI}")

# test_dist: the sums' order of addition under mpirun -np 2..8, run by tests/mpi_test.sh.
if(DSE_HAVE_MPI)
    dse_program(test_dist tests/test_dist.c)
endif()

# tests/mpi_test.sh: real mpirun runs of dse train (bit identity, resume with another P,
# faults); without MPI or mpirun it prints "skipped: ..." and exits 77.
add_test(NAME mpi_train COMMAND sh ${CMAKE_SOURCE_DIR}/tests/mpi_test.sh $<TARGET_FILE:dse> ${DSE_HAVE_MPI}
         $<$<BOOL:${DSE_HAVE_MPI}>:$<TARGET_FILE_DIR:dse>/test_dist>
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
set_tests_properties(mpi_train PROPERTIES SKIP_RETURN_CODE 77 LABELS mpi)
# The Slurm test (CMakeLists.txt) also runs a job of 2 ranks per candidate where MPI is built.
set_tests_properties(slurm PROPERTIES ENVIRONMENT DSE_HAVE_MPI=${DSE_HAVE_MPI})
